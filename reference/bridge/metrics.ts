// /metrics on the private listener (OAUTH_METRICS_ADDR; document 2, Endpoints and Events): per-route
// request counters by status and latency sums, rate-limit refusals by route, and one counter per audit event, in the
// Prometheus text format. The public listener never serves it.
import { createServer, type Server } from 'node:http';

const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

export class Metrics {
  readonly #requests = new Map<string, number>();
  readonly #latency = new Map<string, { sum: number; count: number }>();
  readonly #audit = new Map<string, number>();
  readonly #limited = new Map<string, number>();

  /** One answered request: its route pattern (never the raw path), status and duration. */
  request(route: string, status: number, seconds: number): void {
    const key = `${route}\u0000${status}`;
    this.#requests.set(key, (this.#requests.get(key) ?? 0) + 1);
    const l = this.#latency.get(route) ?? { sum: 0, count: 0 };
    l.sum += seconds;
    l.count++;
    this.#latency.set(route, l);
  }

  /** A request refused by a rate limit (ob.errors.rate-limited), by route pattern. */
  rateLimited(route: string): void {
    this.#limited.set(route, (this.#limited.get(route) ?? 0) + 1);
  }

  audit(name: string): void {
    this.#audit.set(name, (this.#audit.get(name) ?? 0) + 1);
  }

  text(): string {
    const out = ['# HELP svc_bridge_requests_total Requests answered, by route and status.', '# TYPE svc_bridge_requests_total counter'];
    for (const [key, n] of this.#requests) {
      const [route, status] = key.split('\u0000');
      out.push(`svc_bridge_requests_total{route="${esc(route!)}",status="${status}"} ${n}`);
    }
    out.push('# HELP svc_bridge_request_seconds Time to answer, by route.', '# TYPE svc_bridge_request_seconds summary');
    for (const [route, l] of this.#latency) {
      out.push(`svc_bridge_request_seconds_sum{route="${esc(route)}"} ${l.sum.toFixed(6)}`, `svc_bridge_request_seconds_count{route="${esc(route)}"} ${l.count}`);
    }
    out.push('# HELP svc_bridge_rate_limited_total Requests refused by a per-IP rate limit, by route.', '# TYPE svc_bridge_rate_limited_total counter');
    for (const [route, n] of this.#limited) out.push(`svc_bridge_rate_limited_total{route="${esc(route)}"} ${n}`);
    out.push('# HELP svc_bridge_audit_events_total Audit events recorded by this instance, by name.', '# TYPE svc_bridge_audit_events_total counter');
    for (const [name, n] of this.#audit) out.push(`svc_bridge_audit_events_total{event="${esc(name)}"} ${n}`);
    return `${out.join('\n')}\n`;
  }

  /** Serves `GET /metrics` on `HOST:PORT` (the private listener). */
  async listen(addr: string): Promise<Server> {
    const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(addr);
    if (!m) throw new TypeError(`--metrics-addr ${addr}: expected HOST:PORT`);
    const server = createServer((req, res) => {
      if (req.method !== 'GET' || req.url !== '/metrics') {
        res.writeHead(404).end();
        return;
      }
      const body = this.text();
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'content-length': Buffer.byteLength(body) }).end(body);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(Number(m[2]), m[1]!.replace(/^\[|\]$/g, ''), () => resolve());
    });
    return server;
  }
}

// A small authoritative DNS server on one address, UDP and TCP (RFC 1035 4.2.2: a 2-byte length
// before each message), built on dns-packet. What to answer comes from a callback, so the
// authority decides records, delays and silences.
import { createSocket, type Socket } from 'node:dgram';
import { createServer, type Server, type Socket as TcpSocket } from 'node:net';
import * as dnsPacket from 'dns-packet';

export interface DnsAnswer {
  rcode: 'NOERROR' | 'NXDOMAIN' | 'SERVFAIL' | 'REFUSED';
  answers: dnsPacket.Answer[];
  /** Wait this long before answering. */
  delayMs?: number;
  /** Never answer. */
  silent?: boolean;
}

export type DnsHandler = (question: dnsPacket.Question) => DnsAnswer;

const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const;

export interface DnsServer {
  /** The port bound (UDP and TCP share it). */
  port: number;
  close(): Promise<void>;
}

export async function startDnsServer(address: string, port: number, handler: DnsHandler): Promise<DnsServer> {
  const timers = new Set<NodeJS.Timeout>();
  const sockets = new Set<TcpSocket>();

  /** The encoded reply, or undefined to stay silent; `send` is called once it is due. */
  const respond = (query: Buffer, send: (reply: Buffer) => void): void => {
    let packet: dnsPacket.Packet;
    try {
      packet = dnsPacket.decode(query);
    } catch {
      return; // not DNS: drop it
    }
    const question = packet.questions?.[0];
    const rd = (packet.flags ?? 0) & dnsPacket.RECURSION_DESIRED;
    const reply = (rcode: number, answers: dnsPacket.Answer[]) =>
      dnsPacket.encode({ type: 'response', id: packet.id ?? 0, flags: dnsPacket.AUTHORITATIVE_ANSWER | rd | rcode, questions: packet.questions ?? [], answers });
    if (!question || packet.type === 'response') {
      send(reply(1, [])); // FORMERR
      return;
    }
    let answer: DnsAnswer;
    try {
      answer = handler(question);
    } catch {
      answer = { rcode: 'SERVFAIL', answers: [] };
    }
    if (answer.silent) return;
    const bytes = reply(RCODE[answer.rcode], answer.answers);
    if (answer.delayMs && answer.delayMs > 0) {
      const t = setTimeout(() => {
        timers.delete(t);
        send(bytes);
      }, answer.delayMs);
      timers.add(t);
    } else send(bytes);
  };

  const udp: Socket = createSocket({ type: 'udp4', reuseAddr: false });
  udp.on('message', (msg, rinfo) => respond(msg, (reply) => udp.send(reply, rinfo.port, rinfo.address)));
  udp.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    udp.once('error', reject);
    udp.bind(port, address, () => {
      udp.off('error', reject);
      resolve();
    });
  });

  const bound = udp.address().port;
  const tcp: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2) {
        const length = buffered.readUInt16BE(0);
        if (buffered.length < 2 + length) break;
        const message = buffered.subarray(2, 2 + length);
        buffered = buffered.subarray(2 + length);
        respond(Buffer.from(message), (reply) => {
          if (socket.writable) socket.write(Buffer.concat([Buffer.from([reply.length >> 8, reply.length & 0xff]), reply]));
        });
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    tcp.once('error', reject);
    tcp.listen(bound, address, () => {
      tcp.off('error', reject);
      resolve();
    });
  }).catch((error) => {
    udp.close();
    throw error;
  });

  return {
    port: bound,
    async close() {
      for (const t of timers) clearTimeout(t);
      for (const s of sockets) s.destroy();
      await Promise.all([new Promise<void>((r) => udp.close(() => r())), new Promise<void>((r) => tcp.close(() => r()))]);
    },
  };
}

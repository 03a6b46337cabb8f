// A coarse label for the starting browser (context record `browser`): family and platform only,
// never the full User-Agent, never anything finer (ns.context.no-location).
const FAMILIES: [RegExp, string][] = [
  [/\bEdg(?:e|A|iOS)?\//, 'Edge'],
  [/\bOPR\//, 'Opera'],
  [/\bFirefox\/|\bFxiOS\//, 'Firefox'],
  [/\bHeadlessChrome\//, 'Headless Chrome'],
  [/\bChrom(?:e|ium)\/|\bCriOS\//, 'Chrome'],
  [/\bVersion\/[\d.]+.*Safari\//, 'Safari'],
  [/\bcurl\//, 'curl'],
  [/\bundici\b|\bnode\b/i, 'Node.js'],
];
const PLATFORMS: [RegExp, string][] = [
  [/Android/, 'Android'],
  [/iPhone|iPad|iPod/, 'iOS'],
  [/Windows/, 'Windows'],
  [/Mac OS X|Macintosh/, 'macOS'],
  [/CrOS/, 'ChromeOS'],
  [/Linux/, 'Linux'],
];

export function browserLabel(userAgent: string | null): string {
  if (!userAgent) return 'Unknown browser';
  const ua = userAgent.slice(0, 512);
  const family = FAMILIES.find(([re]) => re.test(ua))?.[1] ?? 'Unknown browser';
  const platform = PLATFORMS.find(([re]) => re.test(ua))?.[1];
  return platform ? `${family} on ${platform}` : family;
}

/**
 * Which addresses a webhook may reach (decision 0020 "Webhooks", SSRF). A receiver is on the
 * public internet: private, loopback, link-local (cloud metadata at 169.254.169.254 among
 * them), carrier-grade NAT (Alibaba's metadata at 100.100.100.200), unique-local IPv6 (AWS's
 * fd00:ec2::254), multicast, reserved and documentation ranges are refused, and IPv6 forms
 * that embed an IPv4 address (mapped, NAT64, 6to4, Teredo) with them. The check runs on the
 * address actually connected to (transport.ts), so a name that resolves somewhere else
 * later (DNS rebinding) gains nothing. In sandbox mode loopback is allowed: local receivers.
 */
import { BlockList, isIP } from 'node:net';

const V4_REFUSED: [string, number][] = [
  ['0.0.0.0', 8], // "this network"; 0.0.0.0 reaches the local host
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
];

const V6_REFUSED: [string, number][] = [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96], // NAT64
  ['64:ff9b:1::', 48],
  ['100::', 64], // discard
  ['2001::', 32], // Teredo
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4
  ['fc00::', 7], // unique-local (fd00:ec2::254)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local
  ['ff00::', 8], // multicast
];

const refused = new BlockList();
for (const [net, prefix] of V4_REFUSED) refused.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of V6_REFUSED) refused.addSubnet(net, prefix, 'ipv6');

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

export type AddressClass = 'public' | 'loopback' | 'private';

/** How an IP address is treated; anything that is not an IP literal is `private` (never connected to). */
export function classifyAddress(address: string): AddressClass {
  const bare = address.replace(/^\[|\]$/g, '');
  const family = isIP(bare);
  if (family === 0) return 'private';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  // IPv4-mapped IPv6 (::ffff:a.b.c.d) is checked as its IPv4 address by BlockList.
  if (loopback.check(bare, type)) return 'loopback';
  if (refused.check(bare, type)) return 'private';
  if (type === 'ipv6' && /^::ffff:/i.test(bare)) return classifyAddress(bare.slice(7)) === 'public' ? 'public' : 'private';
  return 'public';
}

/** True when a webhook may connect to this address (loopback only when `allowLoopback`). */
export function addressAllowed(address: string, allowLoopback: boolean): boolean {
  const c = classifyAddress(address);
  return c === 'public' || (c === 'loopback' && allowLoopback);
}

/** `localhost` and names under it always mean this machine. */
export function isLoopbackName(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost');
}

/** The host of a URL without IPv6 brackets. */
export function bareHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/**
 * Why an endpoint URL is refused, or null when it is accepted (D8): http(s) only, no
 * credentials in it, https unless sandbox mode and a loopback host, and never a literal IP
 * address (or `localhost`) outside the public internet; loopback is allowed in sandbox mode.
 * Host names are resolved only when connecting (transport.ts checks every address then).
 */
export function urlProblem(raw: string, sandboxMode: boolean): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute https URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an https URL';
  if (url.username !== '' || url.password !== '') return 'must not carry a user name or password';
  const host = bareHost(url);
  if (host === '') return 'must name a host';
  const literal = isIP(host) !== 0;
  const cls: AddressClass | 'name' = literal ? classifyAddress(host) : isLoopbackName(host) ? 'loopback' : 'name';
  if (cls === 'private') return 'must not point at a private, loopback, link-local or metadata address';
  if (cls === 'loopback' && !sandboxMode) return 'must not point at a private, loopback, link-local or metadata address';
  if (url.protocol === 'http:' && !(sandboxMode && cls === 'loopback')) {
    return sandboxMode ? 'must use https (http only to a loopback address in sandbox mode)' : 'must use https';
  }
  return null;
}

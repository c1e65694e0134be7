// Where push notifications may go. A push URL is named by the caller, so without a policy the service would
// POST task data (session tokens included) to any address it can reach: its own admin ports, the cloud
// metadata endpoint, the operator's private network. The policy is checked twice: when a config is saved
// (a clear error for the caller) and when the connection is made, through a DNS lookup that refuses what the
// policy refuses, so a name that re-resolves to an internal address later still cannot be reached.
import { Resolver as DnsResolver } from 'node:dns/promises';
import { BlockList, isIP, type LookupFunction } from 'node:net';

export interface PushTargetPolicy {
  /**
   * Allow loopback, private, link-local and other non-public destinations, and plain http. For local
   * development and tests only: on a shared host it lets any caller reach internal services.
   */
  allowPrivateNetworks: boolean;
}

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** How host names become addresses; dns.lookup by default, another resolver in tests. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const MAX_PUSH_URL_LENGTH = 2048;

/** A destination the policy refuses; its message says what to change. */
export class PushTargetRefused extends Error {
  override readonly name = 'PushTargetRefused';
}

const subnets = (list: [string, number, 'ipv4' | 'ipv6'][]): BlockList => {
  const blocks = new BlockList();
  for (const [network, prefix, type] of list) blocks.addSubnet(network, prefix, type);
  return blocks;
};

/** Never a destination: "this network", multicast, broadcast and reserved space. */
const NEVER = subnets([
  ['0.0.0.0', 8, 'ipv4'],
  ['224.0.0.0', 4, 'ipv4'],
  ['240.0.0.0', 4, 'ipv4'], // reserved, includes 255.255.255.255
  ['::', 128, 'ipv6'],
  ['ff00::', 8, 'ipv6'],
]);

/**
 * Not public (IANA special-purpose registries): refused unless private networks are allowed. IPv4-mapped IPv6
 * addresses (::ffff:a.b.c.d) are matched against the IPv4 rules by BlockList itself; NAT64, 6to4 and Teredo
 * embed IPv4 addresses that could be internal, so they are refused whole.
 */
const NOT_PUBLIC = subnets([
  ['10.0.0.0', 8, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'], // carrier-grade NAT
  ['127.0.0.0', 8, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'], // link-local, cloud metadata endpoints
  ['172.16.0.0', 12, 'ipv4'],
  ['192.0.0.0', 24, 'ipv4'],
  ['192.0.2.0', 24, 'ipv4'],
  ['192.88.99.0', 24, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['198.18.0.0', 15, 'ipv4'],
  ['198.51.100.0', 24, 'ipv4'],
  ['203.0.113.0', 24, 'ipv4'],
  // inside global unicast (2000::/3, see PUBLIC_IPV6); loopback, NAT64, unique and link-local lie outside it
  ['2001::', 32, 'ipv6'], // Teredo
  ['2001:db8::', 32, 'ipv6'], // documentation
  ['2002::', 16, 'ipv6'], // 6to4
]);

/**
 * Public IPv6 is global unicast (2000::/3) or an IPv4-mapped address (judged by the IPv4 rules above); the
 * rest (IPv4-compatible ::a.b.c.d, SIIT ::ffff:0:a.b.c.d, deprecated site-local fec0::/10, ...) is not.
 */
const PUBLIC_IPV6 = subnets([
  ['2000::', 3, 'ipv6'],
  ['::ffff:0:0', 96, 'ipv6'],
]);

/** Why `address` may not receive push notifications under `policy`, or undefined when it may. */
export function refusalOf(address: string, policy: PushTargetPolicy): string | undefined {
  const family = isIP(address);
  if (family === 0) return `${address} is not an IP address`;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (NEVER.check(address, type)) return `${address} is not a unicast address`;
  if (!policy.allowPrivateNetworks && (NOT_PUBLIC.check(address, type) || (type === 'ipv6' && !PUBLIC_IPV6.check(address, 'ipv6')))) {
    return `${address} is not a public address (loopback, private, link-local and reserved ranges are refused)`;
  }
  return undefined;
}

const DNS_TIMEOUT_MS = 3_000;
const dns = new DnsResolver({ timeout: DNS_TIMEOUT_MS, tries: 2 });

/**
 * Asks DNS directly (c-ares: A and AAAA, with a timeout) rather than getaddrinfo, whose calls hold one of
 * libuv's four threadpool threads for as long as a slow name server takes. "localhost" is loopback (RFC 6761)
 * without asking anyone.
 */
export const systemResolver: Resolver = async (hostname) => {
  if (hostname === 'localhost' || hostname.endsWith('.localhost')) {
    return [
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ];
  }
  const [v4, v6] = await Promise.all([dns.resolve4(hostname).catch(() => []), dns.resolve6(hostname).catch(() => [])]);
  return [...v4.map((address) => ({ address, family: 4 })), ...v6.map((address) => ({ address, family: 6 }))];
};

/** The URL's host as an address or a name: brackets of IPv6 literals removed. */
const hostOf = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1');

/** Checks what the URL alone shows (scheme, length, no userinfo), then where its host resolves. */
export async function checkPushUrl(raw: string, policy: PushTargetPolicy, resolve: Resolver = systemResolver): Promise<URL> {
  if (raw.length > MAX_PUSH_URL_LENGTH) throw new PushTargetRefused(`The push notification URL is longer than ${MAX_PUSH_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new PushTargetRefused('The push notification url must be an absolute http(s) URL, e.g. https://agent.example/a2a/notifications');
  }
  const schemes = policy.allowPrivateNetworks ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) {
    // notifications carry session tokens: never in clear text over the internet
    throw new PushTargetRefused(
      `The push notification url must use ${policy.allowPrivateNetworks ? 'http or https' : 'https'}, not ${url.protocol.replace(':', '')}`,
    );
  }
  if (url.username || url.password) {
    throw new PushTargetRefused(
      'The push notification url must not carry credentials; send them in "authentication" ({scheme, credentials}) instead',
    );
  }
  const host = hostOf(url);
  const addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await resolveOrRefuse(host, resolve);
  for (const { address } of addresses) {
    const refusal = refusalOf(address, policy);
    if (refusal) throw new PushTargetRefused(`Push notifications cannot go to ${host}: ${refusal}`);
  }
  return url;
}

async function resolveOrRefuse(host: string, resolve: Resolver): Promise<ResolvedAddress[]> {
  const addresses = await resolve(host).catch(() => []);
  if (addresses.length === 0) throw new PushTargetRefused(`The push notification host ${host} does not resolve`);
  return addresses;
}

/**
 * A `lookup` for http.request that resolves with `resolve` and refuses the connection when any address is
 * refused by the policy: the check and the connection use the same answer. (IP literals skip lookup; the
 * sender checks those with refusalOf itself.)
 */
export function guardedLookup(policy: PushTargetPolicy, resolve: Resolver = systemResolver): LookupFunction {
  return (hostname, options, callback) => {
    resolveOrRefuse(hostname, resolve)
      .then((addresses) => {
        for (const { address } of addresses) {
          const refusal = refusalOf(address, policy);
          if (refusal) throw new PushTargetRefused(`Push notifications cannot go to ${hostname}: ${refusal}`);
        }
        const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
        if (wanted.length === 0) throw new PushTargetRefused(`The push notification host ${hostname} has no IPv${options.family} address`);
        if (options.all) callback(null, wanted);
        else callback(null, wanted[0]!.address, wanted[0]!.family);
      })
      .catch((error: NodeJS.ErrnoException) => callback(error, '', 0));
  };
}

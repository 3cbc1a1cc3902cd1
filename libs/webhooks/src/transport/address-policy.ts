import { isIPv4, isIPv6 } from 'node:net';

/** Why an address is not a public unicast address (or `public`). */
export type AddressClass =
  | 'public'
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'carrier_grade_nat'
  | 'link_local'
  | 'unique_local'
  | 'site_local'
  | 'multicast'
  | 'broadcast'
  | 'reserved'
  | 'documentation'
  | 'benchmarking'
  | 'invalid';

interface Range {
  base: bigint;
  bits: number;
  class: AddressClass;
}

function ipv4ToInt(address: string): bigint {
  return address.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}

/** Expands an IPv6 address (with `::` and an optional dotted IPv4 tail) to a 128-bit integer. */
function ipv6ToInt(address: string): bigint {
  let text = address.split('%')[0].toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4 = ipv4ToInt(dotted[1]);
    text = `${text.slice(0, -dotted[1].length)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, null];
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const missing = 8 - headGroups.length - tailGroups.length;
  const groups = tail === null ? headGroups : [...headGroups, ...Array<string>(missing).fill('0'), ...tailGroups];
  return groups.reduce((acc, group) => (acc << 16n) | BigInt(parseInt(group || '0', 16)), 0n);
}

const v4 = (cidr: string, cls: AddressClass): Range => {
  const [base, bits] = cidr.split('/');
  return { base: ipv4ToInt(base), bits: Number(bits), class: cls };
};
const v6 = (cidr: string, cls: AddressClass): Range => {
  const [base, bits] = cidr.split('/');
  return { base: ipv6ToInt(base), bits: Number(bits), class: cls };
};

/** IANA special-purpose IPv4 ranges a webhook must not reach (RFC 6890 and successors). */
const IPV4_RANGES: Range[] = [
  v4('0.0.0.0/8', 'unspecified'),
  v4('10.0.0.0/8', 'private'),
  v4('100.64.0.0/10', 'carrier_grade_nat'),
  v4('127.0.0.0/8', 'loopback'),
  v4('169.254.0.0/16', 'link_local'),
  v4('172.16.0.0/12', 'private'),
  v4('192.0.0.0/24', 'reserved'),
  v4('192.0.2.0/24', 'documentation'),
  v4('192.88.99.0/24', 'reserved'),
  v4('192.168.0.0/16', 'private'),
  v4('198.18.0.0/15', 'benchmarking'),
  v4('198.51.100.0/24', 'documentation'),
  v4('203.0.113.0/24', 'documentation'),
  v4('224.0.0.0/4', 'multicast'),
  v4('255.255.255.255/32', 'broadcast'),
  v4('240.0.0.0/4', 'reserved'),
];

/** Ranges that embed an IPv4 address: the embedded address decides. */
const EMBEDDING_IPV4: Array<{ range: Range; extract: (value: bigint) => bigint }> = [
  { range: v6('::ffff:0:0/96', 'public'), extract: (value) => value & 0xffffffffn }, // IPv4-mapped
  { range: v6('64:ff9b::/96', 'public'), extract: (value) => value & 0xffffffffn }, // NAT64 well-known prefix
  { range: v6('2002::/16', 'public'), extract: (value) => (value >> 80n) & 0xffffffffn }, // 6to4
];

const IPV6_RANGES: Range[] = [
  v6('::/128', 'unspecified'),
  v6('::1/128', 'loopback'),
  v6('::/96', 'reserved'), // IPv4-compatible (deprecated)
  v6('64:ff9b:1::/48', 'private'), // local-use NAT64
  v6('100::/64', 'reserved'), // discard-only
  v6('2001::/32', 'reserved'), // Teredo: hides the real endpoint
  v6('2001:db8::/32', 'documentation'),
  v6('3fff::/20', 'documentation'),
  v6('5f00::/16', 'reserved'), // SRv6 SIDs
  v6('fc00::/7', 'unique_local'),
  v6('fe80::/10', 'link_local'),
  v6('fec0::/10', 'site_local'),
  v6('ff00::/8', 'multicast'),
];

function inRange(value: bigint, range: Range, width: number): boolean {
  const shift = BigInt(width - range.bits);
  return value >> shift === range.base >> shift;
}

function classifyIpv4Int(value: bigint): AddressClass {
  return IPV4_RANGES.find((range) => inRange(value, range, 32))?.class ?? 'public';
}

/** Classifies an IP address literal. Anything but `public` is refused as a webhook target. */
export function classifyAddress(address: string): AddressClass {
  if (isIPv4(address)) return classifyIpv4Int(ipv4ToInt(address));
  if (!isIPv6(address.split('%')[0])) return 'invalid';
  const value = ipv6ToInt(address);
  for (const { range, extract } of EMBEDDING_IPV4) {
    if (inRange(value, range, 128)) return classifyIpv4Int(extract(value));
  }
  return IPV6_RANGES.find((range) => inRange(value, range, 128))?.class ?? 'public';
}

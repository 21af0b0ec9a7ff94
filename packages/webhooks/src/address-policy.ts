import ipaddr from 'ipaddr.js';

type IPv4 = ipaddr.IPv4;
type IPv6 = ipaddr.IPv6;

/**
 * IPv4 ranges that are never a webhook target (IANA special-purpose registry). Kept as an
 * explicit table so the policy does not drift with the ipaddr.js version; on top of it an
 * address must also be what ipaddr.js calls `unicast`, which additionally drops the AS112 and
 * AMT anycast ranges (global, but no subscriber lives there).
 */
const BLOCKED_V4: ReadonlyArray<[IPv4, number]> = [
  '0.0.0.0/8', // "this network", unspecified
  '10.0.0.0/8', // private
  '100.64.0.0/10', // carrier-grade NAT
  '127.0.0.0/8', // loopback
  '169.254.0.0/16', // link-local, incl. cloud metadata 169.254.169.254
  '172.16.0.0/12', // private
  '192.0.0.0/24', // IETF protocol assignments
  '192.0.2.0/24', // documentation TEST-NET-1
  '192.88.99.0/24', // 6to4 relay anycast
  '192.168.0.0/16', // private
  '198.18.0.0/15', // benchmarking
  '198.51.100.0/24', // documentation TEST-NET-2
  '203.0.113.0/24', // documentation TEST-NET-3
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, incl. broadcast 255.255.255.255
].map((cidr) => ipaddr.IPv4.parseCIDR(cidr));

/** Global unicast IPv6 is allocated from 2000::/3 only; everything outside it is blocked. */
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');

/**
 * Non-global ranges inside 2000::/3. Outside it (and so blocked already): ::, ::1, 100::/64
 * discard, 64:ff9b:1::/48 beyond its embedded IPv4, 5f00::/16, fc00::/7 unique-local (incl.
 * metadata fd00:ec2::254), fe80::/10 link-local, fec0::/10 site-local, ff00::/8 multicast.
 */
const BLOCKED_V6: ReadonlyArray<[IPv6, number]> = [
  '2001::/23', // IETF protocol assignments: Teredo 2001::/32, benchmarking, ORCHID, ...
  '2001:db8::/32', // documentation
  '2620:4f:8000::/48', // AS112
  '3fff::/20', // documentation
].map((cidr) => ipaddr.IPv6.parseCIDR(cidr));

const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');
const NAT64_LOCAL = ipaddr.IPv6.parseCIDR('64:ff9b:1::/48');
const SIX_TO_FOUR = ipaddr.IPv6.parseCIDR('2002::/16');

/** Byte offsets of the embedded IPv4 for each RFC 6052 prefix length (byte 8 is skipped). */
const RFC6052_OFFSETS: Readonly<Record<48 | 56 | 64 | 96, readonly number[]>> = {
  48: [6, 7, 9, 10],
  56: [7, 9, 10, 11],
  64: [9, 10, 11, 12],
  96: [12, 13, 14, 15],
};

function v4At(bytes: readonly number[], offsets: readonly number[]): IPv4 {
  return new ipaddr.IPv4(offsets.map((i) => bytes[i] ?? 0));
}

/**
 * The IPv4 addresses an IPv6 address stands for, if it is one of the forms that carry one:
 * IPv4-mapped ::ffff:0:0/96, IPv4-compatible ::/96, NAT64 64:ff9b::/96, 6to4 2002::/16, and
 * local-use NAT64 64:ff9b:1::/48. The last may use any prefix length of 48 and up, so every
 * possible position is returned and all of them must pass.
 */
function embeddedIPv4(addr: IPv6): IPv4[] | null {
  const bytes = addr.toByteArray();
  const [p0, p1, p2, p3, p4, p5] = addr.parts;
  const tail = RFC6052_OFFSETS[96];
  if (p0 === 0 && p1 === 0 && p2 === 0 && p3 === 0 && p4 === 0 && (p5 === 0xffff || p5 === 0)) {
    return [v4At(bytes, tail)];
  }
  if (addr.match(NAT64_WELL_KNOWN)) return [v4At(bytes, tail)];
  if (addr.match(SIX_TO_FOUR)) return [v4At(bytes, [2, 3, 4, 5])];
  if (addr.match(NAT64_LOCAL)) return Object.values(RFC6052_OFFSETS).map((o) => v4At(bytes, o));
  return null;
}

function isGlobalV4(addr: IPv4): boolean {
  return addr.range() === 'unicast' && !BLOCKED_V4.some((cidr) => addr.match(cidr));
}

function isGlobalV6(addr: IPv6): boolean {
  // A zone id means a scoped (link- or site-local) address: never global.
  if (addr.zoneId !== undefined) return false;
  const inner = embeddedIPv4(addr);
  if (inner) return inner.every(isGlobalV4);
  return (
    addr.match(GLOBAL_UNICAST_V6) &&
    addr.range() === 'unicast' &&
    !BLOCKED_V6.some((cidr) => addr.match(cidr))
  );
}

/**
 * True unless `ip` is a global unicast address, i.e. true for loopback, private, link-local,
 * CGNAT, multicast, broadcast, reserved, documentation, benchmarking, unspecified, metadata,
 * unique-local, site-local, Teredo, ORCHID, discard-only and any unparseable input.
 * IPv6 forms embedding an IPv4 address (mapped, compatible, NAT64, 6to4) are judged by the
 * IPv4 inside. Non-canonical IPv4 spellings (`127.1`, `0x7f.1`, `2130706433`) are parsed as
 * the address they denote.
 */
export function isBlockedAddress(ip: string): boolean {
  let addr: IPv4 | IPv6;
  try {
    addr = ipaddr.parse(ip);
  } catch {
    return true;
  }
  return addr instanceof ipaddr.IPv4 ? !isGlobalV4(addr) : !isGlobalV6(addr);
}

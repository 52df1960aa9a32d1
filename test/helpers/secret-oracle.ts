/**
 * A second, independent reading of which words of a configuration are secrets, for tests and bench:mask. It does
 * not share code or approach with src/modules/templates/secret-grammar.ts: one regular expression per statement,
 * written from each vendor's documented syntax, each capturing the secret value. It is deliberately plain: it
 * knows the statements of the families netkeep ships templates for, not the grammar behind them.
 */

/** One statement form: the value is capture group 1 (quotes, if any, are part of it). */
const STATEMENTS: RegExp[] = [
  // IOS-like: line/enable/username passwords and secrets, with level, privilege and type digit
  /^\s*(?:enable )?(?:password|secret)(?: level \d+)?(?: \d)? ("[^"]*"|[^\s";{]+)(?: encrypted)?\s*$/,
  /^\s*username \S+(?: privilege \d+| nohangup| role \S+| algorithm-type \S+)* (?:password|secret)(?: \d)? (\S+)/,
  // key chains, TACACS/RADIUS keys, ISAKMP keys
  /^\s*key-string(?: \d)? ([^\s;]+)\s*$/,
  /^\s*(?:tacacs-server|radius-server)(?: host \S+)?(?: \S+ \d+)* key(?: \d)? ("[^"]*"|\S+)/,
  /^crypto isakmp key(?: \d)? (\S+) (?:address|hostname) /,
  /^\s*pre-shared-key (?:address|hostname) \S+(?: \S+)? key(?: \d)? (\S+)\s*$/,
  // NTP and routing-protocol keys
  /^\s*(?:ntp )?authentication-key \d+ (?:md5|cmac-aes-128|hmac-sha1|hmac-sha2-256|sha1) (\S+)(?: \d)?\s*$/,
  /^\s*(?:ip ospf )?message-digest-key \d+ md5(?: \d| encrypted)? (\S+)\s*$/,
  /^\s*(?:ip ospf )?authentication-key(?: \d)? ([^\s;]+)\s*$/,
  // HSRP plain text, SNMP communities
  /^\s*standby \d+ authentication(?: text)? (\S+)\s*$/,
  /^\s*snmp-server community (\S+)/,
  /^\s*rf-switch snmp-community (\S+)\s*$/,
  // L2TP class, NX-OS users
  // Junos set form
  /^set .* (?:encrypted-password|secret|authentication-key|hello-authentication-key|community-name) ("[^"]*"|\S+)\s*$/,
  /^set .* pre-shared-key (?:ascii-text|hexadecimal) ("[^"]*"|\S+)\s*$/,
  /^set .* authentication md5 \d+ key ("[^"]*"|\S+)\s*$/,
  /^set snmp community (\S+)/,
  // Junos and PAN-OS hierarchical form
  /^\s*(?:encrypted-password|secret|authentication-key|hello-authentication-key|phash|community-name) ("[^"]*"|[^\s;]+);/,
  /^\s*pre-shared-key (?:ascii-text|hexadecimal) ("[^"]*"|[^\s;]+);/,
  /^\s*md5 \d+ key ("[^"]*"|[^\s;]+);/,
  // PAN-OS set form
  /^set .* (?:phash|authpwd|privpwd|snmp-community-string) (\S+)\s*$/,
  // F5 TMOS
  /^\s*(?:passphrase|encrypted-password|auth-password|privacy-password) (\$M\$\S+|\S+)\s*$/,
  // FortiOS
  /^\s*set (?:password|passwd|psksecret|secret|api-key|auth-pwd|priv-pwd) ENC (\S+)\s*$/,
];

/** Lines that carry a secret keyword but no secret: a policy, a key number, a BGP community. */
const NOT_STATEMENTS: RegExp[] = [
  /^set system login password /,
  /^\s*(?:set|match|delete) community /,
  /^set policy-options /,
  /^\s*community .* members /,
];

export type FoundSecret = { line: number; value: string };

/** The secret values this oracle reads in a configuration, by line (1-based), quotes taken off. */
export function oracleSecrets(text: string): FoundSecret[] {
  const found: FoundSecret[] = [];
  // hierarchical SNMP communities: `community <v> {` inside an `snmp {` block (elsewhere a community is BGP's)
  let snmpIndent = -1;
  text.split("\n").forEach((line, i) => {
    const indent = line.length - line.trimStart().length;
    if (snmpIndent >= 0 && line.trim() && indent <= snmpIndent) snmpIndent = -1;
    if (/^\s*snmp \{$/.test(line)) snmpIndent = indent;
    const community = snmpIndent >= 0 ? /^\s*community ("[^"]*"|[^\s;{]+) \{$/.exec(line) : null;
    if (community) return void found.push({ line: i + 1, value: community[1]!.replace(/^"(.*)"$/, "$1") });
    if (/^\s*[!#]/.test(line) || NOT_STATEMENTS.some((n) => n.test(line))) return;
    // L2TP classes and IOS lines: " password 0 <v>"
    for (const re of STATEMENTS) {
      const m = re.exec(line);
      if (m && m[1] && !m[1].startsWith("<") && !m[1].startsWith('"<')) {
        found.push({ line: i + 1, value: m[1].replace(/^"(.*)"$/, "$1") });
        return;
      }
    }
  });
  return found;
}

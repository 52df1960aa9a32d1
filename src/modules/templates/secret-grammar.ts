/**
 * The second masking layer: every stored text passes it after its template's own `secrets` rules. It knows no
 * vendor by name; it reads configurations by the grammar they share. A statement whose keyword announces a secret
 * (password, secret, key, community, pre-shared-key ...) holds its value after the keyword and the words that may
 * stand between them (type digits, key numbers, algorithm names, `encrypted`, `cipher`, `level 2` ...), in every
 * dialect: indented IOS-like lines, `set` lines (Junos, FortiOS, PAN-OS, Gaia), hierarchical `name value;` blocks
 * (Junos, PAN-OS, TMOS, SR OS), and RouterOS `name=value` words. A value whose shape gives it away (crypt hashes,
 * Cisco type 6/7, FortiOS `ENC` blobs, PAN-OS `-AQ==` keys, Huawei cipher text, passwords in URLs, private key
 * blocks) is masked wherever it stands.
 *
 * Only the value is replaced, by one marker, so a diff still shows what changed around it; a value already masked
 * (`<...>`) is left alone, so masking twice changes nothing. Plain RegExp, linear: the rules are ours, and each
 * line is first checked for any word a rule could need.
 */

/** The marker a value masked by this layer is replaced with: the one the built-in templates use. */
export const SECRET_MARKER = "<secret hidden>";

/** A masked span of the text: [start, end) offsets, and the rule that found it (the keyword, or the shape). */
/** `marker`: what replaces this span when not the default (inside XML markup, text the XML stays well-formed with). */
export type SecretSpan = { start: number; end: number; rule: string; marker?: string };

/** The marker inside XML (NETCONF's stored configurations): the default's angle brackets would be markup there. */
export const XML_SECRET_MARKER = "(secret removed)";

type Token = { text: string; lower: string; start: number; end: number; quoted: boolean };

type Kind =
  | "password"
  | "key"
  | "community"
  | "snmp-user-key"
  | "authentication"
  | "authentication-mode"
  | "encryption";

/** Keywords whose value follows them (after optional modifiers), by kind. */
const KEYWORDS = new Map<string, Kind>();
for (const word of [
  "password",
  "passwd",
  "secret",
  "passphrase",
  "pass-phrase",
  "psk",
  "psksecret",
  "wpa-psk",
  "pre-shared-key",
  "preshared-key",
  "key-string",
  "encrypted-password",
  "password-hash",
  "phash",
  "authpwd",
  "privpwd",
  "authentication-key",
  "message-digest-key",
  "privacy-key",
  "api-key",
  "secret-key",
  "private-key",
  "server-key",
  "shared-key",
  "tcp-md5-key",
  "md5-key",
  "auth-key",
  "encryption-key",
  "bind-pw",
  "password-encrypt",
  "set-key",
  "text-authentication",
  "community-name",
  "snmp-community",
  "snmp-community-string",
  "readonly-community",
  "readwrite-community",
  "rocommunity",
  "rwcommunity",
  "rocommunity6",
  "rwcommunity6",
  "ro-community",
  "rw-community",
])
  KEYWORDS.set(word, "password");
KEYWORDS.set("key", "key");
KEYWORDS.set("community", "community");
KEYWORDS.set("auth", "snmp-user-key");
KEYWORDS.set("priv", "snmp-user-key");
KEYWORDS.set("authentication", "authentication");
KEYWORDS.set("encryption", "encryption");
for (const word of ["authentication-mode", "privacy-mode", "area-authentication-mode", "domain-authentication-mode"])
  KEYWORDS.set(word, "authentication-mode");

/** Compound keywords named by their last part: `bind-password`, `lsp-password`, `ppk-secret`, `hello-authentication-key`. */
const PASSWORD_SUFFIX =
  /^[a-z0-9][a-z0-9-]*-(?:password|passwd|pwd|secret|passphrase|pass-phrase|psk|password-hash|authentication-key|pre-shared-key)$/;

const kindOf = (word: string): Kind | undefined =>
  KEYWORDS.get(word) ?? (word.length > 4 && word.includes("-") && PASSWORD_SUFFIX.test(word) ? "password" : undefined);

/** Words between a keyword and its value that say how the value is written, never the value itself. */
const MODIFIERS = new Set([
  "encrypted",
  "encrypt",
  "hidden",
  "unencrypted",
  "clear",
  "cleartext",
  "clear-text",
  "plain",
  "plaintext",
  "plain-text",
  "ascii",
  "ascii-text",
  "hex",
  "hexadecimal",
  "text",
  "string",
  "cipher",
  "simple",
  "irreversible-cipher",
  "hash",
  "hashed",
  "value",
  "type",
  "local",
  "remote",
  "enc",
]);

/** Hash and cipher names that stand before a value (`md5 <v>`, `auth sha <v>`, `priv aes 128 <v>`). */
const ALGORITHM =
  /^(?:hmac-|cmac-)?(?:md5|sha(?:-?\d+)?|aes(?:-?\d+)?(?:-cmac(?:-\d+)?)?|des|3des|des56|aes-?cfb-?\d+|sha\d*-\d+|ietf-md5|keyed-md5|meticulous-keyed-md5)$/;

/** Words that take one argument of their own between a keyword and its value (`enable password level 2 <v>`). */
const WITH_ARGUMENT = new Set(["level", "privilege", "role", "eigrp"]);

/** Words that begin another part of the statement, never a value (`key 1 algorithm md5 secret <v>`). */
const STATEMENT_WORDS = new Set([
  "algorithm",
  "start-time",
  "options",
  "accept-lifetime",
  "send-lifetime",
  "key-id",
  "keyid",
  "mode",
  "tolerance",
  "timeout",
  "port",
]);

/** What may follow `password` (and its kin) when the statement sets a policy, not a password. */
const PASSWORD_POLICY =
  /^(?:encryption|policy|strength-check|secure-mode|prompt|format|change-type|history|complexity|aging|lifetime|expiration|expire|length|required|option|options|control|reuse|recovery|retries|retry|minimum|maximum|(?:minimum|maximum|min|max)-.*|address|hostname|keyring|profile|keychain|key-chain|inheritance-disable|manager|operator|port-access|default|enable|disable)$/;

/** What may follow `key` when it names no secret: key chains, key pairs, files. */
const KEY_NOT_VALUE = new Set([
  "chain",
  "config-key",
  "generate",
  "pubkey-chain",
  "zeroize",
  "param",
  "storage",
  "export",
  "import",
  "rsa",
  "dsa",
  "ecdsa",
  "ec",
  "ed25519",
  "encrypt",
  "decrypt",
  "move",
  "lock",
  "unlock",
  "id",
  "exchange",
  "size",
  "type",
  "source",
  "none",
  "protection",
]);

/** Words of a statement about public keys: a `key` in it is a public one. */
const PUBLIC_KEYS = new Set(["public-key", "public-keys", "pubkey-chain", "authorized-keys", "ssh-rsa", "ssh-ed25519"]);

/** `config snmp community create|accessmode|ipaddr ... <name>` (AireOS): verbs, the template masks the name. */
const COMMUNITY_VERBS = new Set(["create", "delete", "accessmode", "ipaddr", "mode", "ipsec", "remove"]);

/** Options of NTP, tunnel and other statements where `key <number>` numbers a key defined elsewhere. */
const KEY_OWNERS_NOT_SECRET = new Set(["crypto", "tunnel", "ssh", "trusted-key", "pki", "trustpoint", "license"]);

/** Comware RADIUS/HWTACACS scheme keys: `key authentication cipher <v>`. */
const KEY_PURPOSES = new Set(["authentication", "accounting", "authorization"]);

/** A statement whose rest is free text: nothing after these words is read as a keyword. */
const FREE_TEXT = new Set([
  "description",
  "desc",
  "remark",
  "comment",
  "banner",
  "motd",
  "contact",
  "location",
  "message",
  "alias",
  "syslocation",
  "syscontact",
  "sysname",
]);

/** Whether a word starts free text: `description`, a dotted key ending in one (`config.users.u1.description`). */
const isFreeText = (word: string) => FREE_TEXT.has(word.slice(word.lastIndexOf(".") + 1));

/** An XML element on one line: `<password>v</password>`; only a secret tag's content is a secret. */
const XML_ELEMENT = /^(\s*<([\w:-]+)(?:\s[^>]*)?>)([^<]*)<\/\2>\s*$/;

/** Words after `community` that make it a BGP community (route maps, policies), not an SNMP one. */
const BGP_COMMUNITY_BEFORE = new Set([
  "set",
  "match",
  "delete",
  "add",
  "from",
  "then",
  "matches-any",
  "matches-every",
  "in",
  "is",
  "send",
  "additive",
  "remove",
]);

/** Lines worth reading at all: one of these must occur (case-insensitive) for any rule to apply. */
const WORTH_READING =
  /pass|secret|key|commun|psk|auth|priv|phrase|pwd|hash|snmp|encryption|\$|ENC |-AQ==|%[$^]%|:\/\/[^\s/@]*:|BEGIN|\s7 [01]\d|\s6 [A-Za-z_^`[\]\\]{16}/i;

// Shapes, each matched on a line outside what the keywords masked.
const SHAPES: { rule: string; pattern: RegExp; group: number; hint: string }[] = [
  // crypt(3) and its vendor kin: $1$ MD5, $5$/$6$ SHA, $2y$ bcrypt, $8$/$9$ Cisco, Junos $9$, F5 $M$, Comware $c$3$/$h$6$, ASA pbkdf2.
  {
    rule: "shape:crypt-hash",
    pattern:
      /(?<![\w$])(\$(?:1|1a|2[abxy]?|5|6|7|8|9|y|gy|M|sha1|sha256|sha512|pbkdf2-sha\d+|[ch]\$\d+)\$[A-Za-z0-9./+=_$\-]{6,})/g,
    group: 1,
    hint: "$",
  },
  // Cisco type 7: two decimal digits (the seed, 00-15) then hex pairs, after the type digit.
  {
    rule: "shape:cisco-type7",
    pattern: /(?<![\w-])7 ((?:0\d|1[0-5])(?:[0-9A-Fa-f]{2}){3,})(?![\w-])/g,
    group: 1,
    hint: "7 ",
  },
  // Cisco type 6 (AES): letters, underscores and ^`[]\ ending in AAB, after the type digit.
  { rule: "shape:cisco-type6", pattern: /(?<![\w-])6 ([A-Za-z_^`[\]\\]{16,}AAB)(?![\w-])/g, group: 1, hint: "6 " },
  // FortiOS encrypted values: "ENC <blob>".
  { rule: "shape:fortios-enc", pattern: /(?<![\w-])ENC (?!<)("?[A-Za-z0-9+/=]{8,}"?)/g, group: 1, hint: "ENC " },
  // PAN-OS encrypted values.
  { rule: "shape:panos-aq", pattern: /(-AQ==[A-Za-z0-9+/=]+)/g, group: 1, hint: "-AQ==" },
  // Huawei VRP cipher text.
  {
    rule: "shape:vrp-cipher",
    pattern: /(%\^%#\S{4,}?%\^%#|%\$%\$\S{4,}?%\$%\$|@%@%\S{4,}?@%@%)/g,
    group: 1,
    hint: "%",
  },
  // A password in a URL: scheme://user:password@host.
  { rule: "shape:url-password", pattern: /:\/\/[^\s:/@"']+:([^\s@"'<]+)@/g, group: 1, hint: "://" },
  // Arista CloudVision onboarding: TerminAttr's -cvauth=key,<key>.
  { rule: "shape:cvauth-key", pattern: /-cvauth=key,(?!<)([^\s,]+)/g, group: 1, hint: "-cvauth=" },
  // SR OS hashed values: "<value>" hash / hash2.
  { rule: "shape:sros-hash", pattern: /"([^"<]+)" hash2?(?![\w-])/g, group: 1, hint: " hash" },
  // Junos marks a secret value with ## SECRET-DATA (the template's rule masks it first; this one stands behind it).
  {
    rule: "shape:junos-secret-data",
    pattern: /(?<=\s)((?:"(?!<)[^"]*"|[^\s";<>]+));\s*## SECRET-DATA/g,
    group: 1,
    hint: "SECRET-DATA",
  },
];

/** One line's words: quoted strings and `<...>` markers are single words; a leaf's trailing `;` is not part of one. */
function tokenize(line: string, offset: number): Token[] {
  const tokens: Token[] = [];
  const n = line.length;
  let i = 0;
  while (i < n) {
    const c = line.charCodeAt(i);
    if (c === 32 || c === 9) {
      i++;
      continue;
    }
    const start = i;
    let quoted = false;
    if (c === 34 /* " */ || c === 39 /* ' */) {
      const quote = line[i];
      i++;
      while (i < n && line[i] !== quote) i += line[i] === "\\" ? 2 : 1;
      i = Math.min(n, i + 1);
      quoted = true;
    } else if (c === 60 /* < */ && /^<[^<>]*>/.test(line.slice(i))) {
      i = line.indexOf(">", i) + 1;
    } else {
      while (i < n && line[i] !== " " && line[i] !== "\t") i++;
    }
    let end = i;
    // "value;" and "value;" after a quote: the semicolon ends a leaf, it is not the value's.
    if (!quoted && end - start > 1 && line[end - 1] === ";") end--;
    const text = line.slice(start, end);
    tokens.push({ text, lower: text.toLowerCase(), start: offset + start, end: offset + end, quoted });
    if (end < i) tokens.push({ text: ";", lower: ";", start: offset + end, end: offset + i, quoted: false });
  }
  return tokens;
}

const STRUCTURE = new Set(["{", "}", "[", "]", ";", "(", ")", "=", "|"]);
const DIGITS = /^\d+$/;

/**
 * A value already hidden: a template's marker, quoted or not, a cipher text with one inside (`%^%#<secret
 * removed>%^%#`), or the asterisks a device prints in place of a value (FTD, OS10).
 */
const MARKER_INSIDE = /<(?:secret|hidden|removed|value|configuration)\b|\(secret removed\)/;
const isMasked = (t: Token) =>
  t.text.startsWith("<") ||
  (t.quoted && t.text.charCodeAt(1) === 60) /* < */ ||
  MARKER_INSIDE.test(t.text) ||
  /^"?\*+"?$/.test(t.text);
/** The first line of a private key block: the lines after it are masked, this one says what they are. */
const isBlockStart = (t: Token) => t.text.includes("-----BEGIN ");
const unquotedLower = (t: Token) => (t.quoted ? t.lower.slice(1, -1) : t.lower);

/** The span a value token is masked over: inside its quotes, when it has them. */
function valueSpan(t: Token, rule: string): SecretSpan | undefined {
  if (isMasked(t) || isBlockStart(t)) return undefined;
  if (t.quoted) return t.end - t.start > 2 ? { start: t.start + 1, end: t.end - 1, rule } : undefined;
  return { start: t.start, end: t.end, rule };
}

/** Where a statement stands: the lines it is nested in (by indentation), and its RouterOS section. */
type Context = { parents: Parent[]; section: Parent };

/**
 * A line others are nested in: its text lower-cased and split into words once, when a rule first asks, and
 * whether it opens an SNMP community block (FortiOS `config system snmp community`, RouterOS `/snmp community`),
 * inherited by the lines under it.
 */
type Parent = { indent: number; raw: string; lower?: string; words?: string[]; snmpCommunity: boolean };

const lowerOf = (p: Parent) => (p.lower ??= p.raw.toLowerCase());
const wordsOf = (p: Parent) => (p.words ??= lowerOf(p).trim().split(/\s+/));
const parent = (indent: number, raw: string, inherited: boolean): Parent => ({
  indent,
  raw,
  snmpCommunity: inherited || (raw.includes("ommunity") && /snmp community/i.test(raw)),
});

const contextHas = (ctx: Context, tokens: Token[], test: (word: string) => boolean): boolean =>
  tokens.some((t) => test(t.lower)) ||
  ctx.parents.some((p) => wordsOf(p).some(test)) ||
  wordsOf(ctx.section).some(test);

const isSnmpWord = (w: string) => w.startsWith("snmp") || w === "/snmp";

/**
 * The value of keyword tokens[i], skipping what may stand between (modifiers, algorithms, numbers, `level 2`);
 * undefined when the statement holds none (`password policy ...`, `password {`, another keyword comes first).
 */
function valueAfter(tokens: Token[], i: number, kind: Kind): Token | undefined {
  let numberSeen: Token | undefined;
  for (let j = i + 1; j < tokens.length; j++) {
    const t = tokens[j]!;
    const w = unquotedLower(t);
    if (isMasked(t)) return t;
    if (STRUCTURE.has(t.text) || w === "") return numberSeen;
    // another keyword with a value of its own after it: that one masks it (`key-string password <v>`, `key 0 secret <v>`)
    const hasNext = j + 1 < tokens.length && !STRUCTURE.has(tokens[j + 1]!.text);
    if (!t.quoted && hasNext && kindOf(w) && !(kind === "key" && KEY_PURPOSES.has(w))) return undefined;
    if (!t.quoted && MODIFIERS.has(w)) continue;
    if (!t.quoted && kind === "key" && KEY_PURPOSES.has(w)) continue;
    if (!t.quoted && ALGORITHM.test(w)) continue;
    if (!t.quoted && WITH_ARGUMENT.has(w) && j + 1 < tokens.length) {
      j++;
      continue;
    }
    if (!t.quoted && DIGITS.test(w) && j + 1 < tokens.length && !STRUCTURE.has(tokens[j + 1]!.text)) {
      // a key number or a type digit before the value; a password of digits alone when nothing else follows
      numberSeen ??= t;
      continue;
    }
    if (!t.quoted && kind === "password" && PASSWORD_POLICY.test(w)) return undefined;
    if (!t.quoted && STATEMENT_WORDS.has(w)) return undefined;
    return t;
  }
  return numberSeen;
}

/** `key`: the secret of a server, peer or keyring; not a key chain's key number, an NTP key id, a tunnel key, a key pair. */
function keyValue(tokens: Token[], i: number, ctx: Context): Token | undefined {
  const before = tokens[i - 1]?.lower;
  if (before && KEY_OWNERS_NOT_SECRET.has(before)) return undefined;
  const numbered = (w: string) =>
    w === "ntp" ||
    w === "ntp-service" ||
    w === "chain" ||
    w === "key-chain" ||
    w === "keychain" ||
    w.startsWith("authentication-key-chain") ||
    w === "trusted-key";
  if (contextHas(ctx, tokens, numbered) || ctx.parents.some((p) => /(?:^|\s)key chain\s/.test(lowerOf(p))))
    return undefined;
  // F5 TMOS SSL profiles name a key object (`key /Common/site.key`, `key site`), never its contents.
  if (
    contextHas(
      ctx,
      tokens,
      (w) => w === "client-ssl" || w === "server-ssl" || w === "cert-key-chain" || w === "ssl-key",
    )
  )
    return undefined;
  if (tokens.slice(0, i).some((t) => PUBLIC_KEYS.has(t.lower))) return undefined;
  const next = tokens[i + 1];
  if (!next) return undefined;
  const w = unquotedLower(next);
  if (KEY_NOT_VALUE.has(w) || w.startsWith("/")) return undefined;
  if (!next.quoted && DIGITS.test(w)) {
    // `key 7 <v>`: a type digit; `key 42` or `key 1 md5`: a key number, the secret is elsewhere
    const after = tokens[i + 2];
    if (
      w.length !== 1 ||
      !after ||
      STRUCTURE.has(after.text) ||
      (!after.quoted && (ALGORITHM.test(after.lower) || kindOf(after.lower) || STATEMENT_WORDS.has(after.lower)))
    )
      return undefined;
    const value = after;
    return value.text.startsWith("/") ? undefined : value;
  }
  const value = valueAfter(tokens, i, "key");
  return value && !value.text.startsWith("/") && !KEY_NOT_VALUE.has(unquotedLower(value)) ? value : undefined;
}

/** `snmp-server host <addr> [vrf X] [informs|traps] [version 1|2c] <community>`: the community has no keyword. */
function snmpHostCommunity(tokens: Token[]): Token | undefined {
  if (tokens[0]?.lower !== "snmp-server" || tokens[1]?.lower !== "host" || !tokens[2] || !/[.:]/.test(tokens[2].text))
    return undefined;
  for (let j = 3; j < tokens.length; j++) {
    const w = tokens[j]!.lower;
    if (w === "vrf" || w === "use-vrf" || w === "filter-vrf") j++;
    else if (/^(?:informs?|traps?|auth|noauth|priv)$/.test(w)) continue;
    else if (/^\d$/.test(w) && j + 1 < tokens.length) continue;
    else if (w === "version") {
      if (tokens[j + 1]?.lower === "3") return undefined;
      j++;
    } else if (w === "community" || w === "udp-port" || w === "source-interface" || w === "dscp") return undefined;
    else return tokens[j];
  }
  return undefined;
}

/** IPsec algorithm words of OSPFv3 keys: `esp aes-cbc 128`, `sha1`, `null`. */
const IPSEC_WORD = /^(?:esp|ah|null|aes-cbc|aes|3des|des|md5|sha1|sha|sha-?\d+|\d+)$/;

/**
 * OSPFv3 IPsec: `authentication ipsec spi 256 md5 [0|7] <v>`, `encryption ipsec spi 256 esp aes-cbc 128 [0|7]
 * <v> sha1 [0|7] <v>`: after `spi N`, each key follows its algorithm words and an optional type digit.
 */
function ipsecKeys(tokens: Token[], i: number, spans: SecretSpan[]): void {
  if (tokens[i + 2]?.lower !== "spi") return;
  for (let j = i + 4; j < tokens.length; j++) {
    const t = tokens[j]!;
    if (IPSEC_WORD.test(t.lower) && j + 1 < tokens.length) continue;
    push(spans, valueSpan(t, `${tokens[i]!.lower} ipsec`));
  }
}

/** The spans one line's statement holds secret by its keywords. */
function keywordSpans(tokens: Token[], ctx: Context, spans: SecretSpan[]): void {
  const hostCommunity = snmpHostCommunity(tokens);
  if (hostCommunity) push(spans, valueSpan(hostCommunity, "snmp-server host"));
  // a keyword inside a [ list ] is one of its members (`authentication-order [ password radius ]`), no statement
  let inList = 0;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.quoted) continue;
    if (t.text === "[") inList++;
    else if (t.text === "]" || t.text === "];") inList = Math.max(0, inList - 1);
    let w = t.lower;
    let eq = -1;
    // RouterOS: name=value
    if (!kindOf(w) && (eq = w.indexOf("=")) > 0) {
      w = w.slice(0, eq);
      if (isFreeText(w)) return;
      const secret =
        kindOf(w) === "password" ||
        (w === "name" && ctx.section.snmpCommunity) ||
        (w.endsWith("-key") && !w.endsWith("public-key"));
      if (secret && eq + 1 < t.text.length) {
        const valueText = t.text.slice(eq + 1);
        const quoted = valueText.startsWith('"');
        push(
          spans,
          valueSpan(
            { text: valueText, lower: valueText.toLowerCase(), start: t.start + eq + 1, end: t.end, quoted },
            w,
          ),
        );
      }
      continue;
    }
    if (isFreeText(w)) return;
    if (inList) continue;
    // FortiOS: config system snmp community / edit 1 / set name "<community>"
    if (w === "name" && tokens[i - 1]?.lower === "set" && ctx.parents.some((p) => p.snmpCommunity)) {
      const value = tokens[i + 1];
      if (value) push(spans, valueSpan(value, "snmp community name"));
      return;
    }
    const kind = kindOf(w);
    if (!kind) continue;
    let value: Token | undefined;
    switch (kind) {
      case "password":
        value = valueAfter(tokens, i, kind);
        break;
      case "key":
        value = keyValue(tokens, i, ctx);
        break;
      case "community": {
        const before = tokens[i - 1]?.lower;
        const after = tokens[i + 1]?.lower;
        if ((before && BGP_COMMUNITY_BEFORE.has(before)) || after === "members" || !contextHas(ctx, tokens, isSnmpWord))
          break;
        value = valueAfter(tokens, i, kind);
        if (value && /^(?:read|write|read-only|read-write)$/.test(value.lower))
          value = valueAfter(tokens, tokens.indexOf(value), kind);
        if (value && COMMUNITY_VERBS.has(value.lower)) value = undefined;
        break;
      }
      case "snmp-user-key":
        // SNMPv3 users: `snmp-server user U G v3 auth sha <v> priv aes 128 <v>`; not a group's `v3 priv read <view>`
        if (contextHas(ctx, tokens, isSnmpWord) && tokens.some((x) => x.lower === "user" || x.lower === "usm-user"))
          value = valueAfter(tokens, i, "password");
        break;
      case "authentication": {
        // HSRP/VRRP/GLBP text authentication and RIP/VRRP `authentication text|string <v>`
        const next = tokens[i + 1]?.lower;
        const redundancy = contextHas(
          ctx,
          tokens,
          (x) => x === "standby" || x === "vrrp" || x === "glbp" || x === "vrrp-group" || x === "hsrp" || x === "nhrp",
        );
        if (next === "ipsec") {
          ipsecKeys(tokens, i, spans);
          break;
        }
        if (next === "text" || next === "string") value = tokens[i + 2];
        else if (
          redundancy &&
          next &&
          !ALGORITHM.test(next) &&
          !kindOf(next) &&
          !/^(?:key-chain|keychain|mode|type)$/.test(next)
        )
          value = tokens[i + 1];
        if (value && (kindOf(value.lower) || STRUCTURE.has(value.text))) value = undefined;
        break;
      }
      case "encryption":
        if (tokens[i + 1]?.lower === "ipsec") ipsecKeys(tokens, i, spans);
        break;
      case "authentication-mode": {
        // VRP/Comware: `authentication-mode md5 1 cipher <v>`, `authentication-mode simple <v>`; not `aaa`, `keychain X`
        const next = tokens[i + 1]?.lower;
        if (next && (ALGORITHM.test(next) || next === "simple" || next.startsWith("hmac-")))
          value = valueAfter(tokens, i + 1, "password");
        break;
      }
    }
    if (value) {
      push(spans, valueSpan(value, w));
      i = tokens.indexOf(value);
    }
  }
}

function push(spans: SecretSpan[], span: SecretSpan | undefined): void {
  if (span && !spans.some((s) => s.start < span.end && span.start < s.end)) spans.push(span);
}

const BEGIN_PRIVATE = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/;
const END_PRIVATE = /-----END [A-Z0-9 ]*PRIVATE KEY-----/;

/**
 * Every secret this layer finds in a text, in order, not overlapping one another. Offsets are the text's.
 * Lines are read one by one; each knows the lines it is nested in by indentation (`snmp {` above `community x {`,
 * `key chain K` above ` key 1`) and, for RouterOS exports, its `/section`.
 */
export function findGenericSecrets(text: string): SecretSpan[] {
  const spans: SecretSpan[] = [];
  const parents: Parent[] = [];
  let section = parent(0, "", false);
  let inPrivateKey = false;
  // free text over several lines: a banner's body up to its delimiter, a quoted string up to its closing quote
  let textUntil: string | undefined;
  let textLines = 0;
  for (let start = 0; start <= text.length; ) {
    let eol = text.indexOf("\n", start);
    if (eol === -1) eol = text.length;
    const line = text.slice(start, eol);
    let indent = 0;
    while (indent < line.length && (line.charCodeAt(indent) === 32 || line.charCodeAt(indent) === 9)) indent++;
    const blank = indent === line.length;
    if (inPrivateKey) {
      // the key's body: every line of it, up to the END line
      if (END_PRIVATE.test(line)) inPrivateKey = false;
      else if (!blank) {
        const quote = line.endsWith('"') ? 1 : 0;
        if (!line.slice(indent).startsWith("<"))
          spans.push({ start: start + indent, end: eol - quote, rule: "shape:private-key" });
      }
    } else if (
      textUntil !== undefined &&
      ++textLines <= FREE_TEXT_LINES &&
      !(textUntil === '"' && FORTIOS_STATEMENT.test(line))
    ) {
      if (textUntil === '"' ? oddQuotes(line) : line.includes(textUntil)) textUntil = undefined;
      else if (!blank) lineSpans(line, start, { parents: [], section }, spans, false);
    } else if (!blank) {
      textUntil = freeTextOpened(line, indent);
      textLines = 0;
      while (parents.length && parents[parents.length - 1]!.indent >= indent) parents.pop();
      if (indent === 0 && line.charCodeAt(0) === 47 /* / */) section = parent(0, line, false);
      if (line.includes("-----BEGIN") && BEGIN_PRIVATE.test(line)) inPrivateKey = !END_PRIVATE.test(line);
      const up = parents.length ? parents[parents.length - 1]!.snmpCommunity : false;
      // TMOS iRules and iCall scripts are TCL code (`set key "$host$uri"`): only a value's shape counts there
      const code = parents.length > 0 && /^(?:ltm|gtm) rule |^sys icall script /.test(parents[0]!.raw);
      if (WORTH_READING.test(line) || up || section.snmpCommunity)
        lineSpans(line, start, { parents: parents.slice(), section }, spans, !code);
      parents.push(parent(indent, line.slice(indent), up));
    }
    start = eol + 1;
  }
  return spans;
}

/**
 * Free text ends by this many lines at the latest (banners and messages are short): a delimiter or quote that
 * never closes must not leave the rest of a configuration unread.
 */
const FREE_TEXT_LINES = 100;

/** A FortiOS statement: a quoted text left open never runs past one. */
const FORTIOS_STATEMENT = /^\s*(?:config|edit|next|end|set|unset)(?:\s|$)/;

/** Whether a line has an odd number of unescaped double quotes: it opens or closes a string spanning lines. */
function oddQuotes(line: string): boolean {
  let odd = false;
  for (let i = 0; i < line.length; i++) {
    if (line[i] === "\\") i++;
    else if (line[i] === '"') odd = !odd;
  }
  return odd;
}

/**
 * What ends the free text a line opens, if it opens one: an IOS-like `banner motd ^C` (its delimiter, `^C` or one
 * character, unless the line closes it too), an EOS `banner login` (a line `EOF`), or a quoted string left open
 * (FortiOS `set buffer "<html>...`).
 */
function freeTextOpened(line: string, indent: number): string | undefined {
  if (indent === 0 && line.startsWith("banner ")) {
    const m = /^banner\s+\S+(?:\s+(\S.*))?$/.exec(line);
    if (!m) return undefined;
    if (m[1] === undefined) return "EOF";
    const delimiter = m[1].startsWith("^C") ? "^C" : m[1][0]!;
    return m[1].slice(delimiter.length).includes(delimiter) ? undefined : delimiter;
  }
  // a FortiOS value opening a quoted text over several lines: `set buffer "<html>...`
  return line.includes('"') && /^\s*set \S+ "/.test(line) && oddQuotes(line) ? '"' : undefined;
}

const lineSpans = (line: string, offset: number, ctx: Context, spans: SecretSpan[], statement = true) => {
  const found: SecretSpan[] = [];
  const first = line.trimStart()[0];
  const xml = statement && first === "<" ? XML_ELEMENT.exec(line) : null;
  if (!statement) {
    // free text: only a value's shape counts
  } else if (xml) {
    const tag = xml[2]!.toLowerCase();
    const content = xml[3]!;
    if (kindOf(tag) === "password" && content.trim() && !MARKER_INSIDE.test(content) && !content.startsWith("<")) {
      found.push({ start: offset + xml[1]!.length, end: offset + xml[1]!.length + content.length, rule: tag });
    }
  } else if (first !== "!" && first !== "#" && first !== "<") {
    // comment lines (! and # in most dialects) hold no statement, nor does XML markup; a shape still counts there
    keywordSpans(tokenize(line, offset), ctx, found);
  }
  for (const shape of SHAPES) {
    if (!line.includes(shape.hint)) continue;
    shape.pattern.lastIndex = 0;
    for (let m; (m = shape.pattern.exec(line)); ) {
      const value = m[shape.group]!;
      const at = m.index + m[0].indexOf(value);
      push(found, { start: offset + at, end: offset + at + value.length, rule: shape.rule });
    }
  }
  found.sort((a, b) => a.start - b.start);
  if (first === "<") for (const f of found) f.marker = XML_SECRET_MARKER;
  spans.push(...found);
};

/** The text with every span replaced by the marker (spans in order, not overlapping). */
export function applySpans(text: string, spans: readonly SecretSpan[], marker = SECRET_MARKER): string {
  if (!spans.length) return text;
  let out = "";
  let at = 0;
  for (const s of spans) {
    out += text.slice(at, s.start) + (s.marker ?? marker);
    at = s.end;
  }
  return out + text.slice(at);
}

/** The text with every secret this layer finds replaced by SECRET_MARKER. */
export const maskGenericSecrets = (text: string): string => applySpans(text, findGenericSecrets(text));

import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Attribute, Change, Client } from "ldapts";
import { failWithOutput, freePort, start, stopGroup, type Spawned } from "./process.ts";
import { until } from "./until.ts";

/**
 * A real OpenLDAP server (Debian's slapd) on 127.0.0.1 for directory sign-in tests: a slapd.conf, a database
 * loaded with slapadd and a TLS certificate from a CA made here with openssl, all in a temp dir; plain LDAP
 * (StartTLS-capable) and LDAPS on two loopback ports. Never the machine's /etc/ldap/slapd.d.
 */

const SLAPD = "/usr/sbin/slapd";
const SLAPADD = "/usr/sbin/slapadd";

/** Why real-slapd tests cannot run here, or undefined when they can. */
export function slapdUnavailable(): string | undefined {
  if (!existsSync(SLAPD) || !existsSync(SLAPADD)) return "Debian package slapd is not installed (no /usr/sbin/slapd)";
  if (!existsSync("/etc/ldap/schema/inetorgperson.schema"))
    return "slapd's schema files are missing (/etc/ldap/schema)";
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" });
  } catch {
    return "openssl is not installed (it makes the test CA)";
  }
  return undefined;
}

export const SUFFIX = "dc=example,dc=test";
export const ADMIN_DN = `cn=admin,${SUFFIX}`;
const ADMIN_PASSWORD = "slapd-admin-pw";
export const SERVICE_DN = `cn=netkeep,ou=services,${SUFFIX}`;
export const SERVICE_PASSWORD = "service-bind-pw";

export type DirectoryPerson = { uid: string; password: string; mail?: string; disabled?: boolean };
export type DirectoryGroup = { cn: string; members: string[] };

export const userDn = (uid: string) => `uid=${uid},ou=people,${SUFFIX}`;
export const groupDn = (cn: string) => `cn=${cn},ou=groups,${SUFFIX}`;

function ldif(people: DirectoryPerson[], groups: DirectoryGroup[]): string {
  const blocks = [
    `dn: ${SUFFIX}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Example`,
    ...["people", "groups", "services"].map(
      (ou) => `dn: ou=${ou},${SUFFIX}\nobjectClass: organizationalUnit\nou: ${ou}`,
    ),
    `dn: ${SERVICE_DN}\nobjectClass: person\ncn: netkeep\nsn: service\nuserPassword: ${SERVICE_PASSWORD}`,
    ...people.map((p) =>
      [
        `dn: ${userDn(p.uid)}`,
        "objectClass: inetOrgPerson",
        `uid: ${p.uid}`,
        `cn: ${p.uid}`,
        `sn: ${p.uid}`,
        `userPassword: ${p.password}`,
        ...(p.mail ? [`mail: ${p.mail}`] : []),
        ...(p.disabled ? ["employeeType: disabled"] : []),
      ].join("\n"),
    ),
    // groupOfNames needs a member: the service account stands in for an empty group.
    ...groups.map((g) =>
      [
        `dn: ${groupDn(g.cn)}`,
        "objectClass: groupOfNames",
        `cn: ${g.cn}`,
        ...(g.members.length ? g.members.map((m) => `member: ${userDn(m)}`) : [`member: ${SERVICE_DN}`]),
      ].join("\n"),
    ),
  ];
  return blocks.join("\n\n") + "\n";
}

/** A CA and a certificate for 127.0.0.1 signed by it; returns the CA's PEM. */
function makeCertificates(dir: string): string {
  const run = (args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
  run([
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
    "-days",
    "2",
    "-subj",
    "/CN=netkeep test CA",
  ]);
  run([
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "server.key",
    "-out",
    "server.csr",
    "-subj",
    "/CN=127.0.0.1",
  ]);
  writeFileSync(join(dir, "san.cnf"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  run([
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "server.pem",
    "-days",
    "2",
    "-extfile",
    "san.cnf",
  ]);
  return readFileSync(join(dir, "ca.pem"), "utf8");
}

async function waitForPort(port: number, spawned: Spawned): Promise<void> {
  const listening = () =>
    new Promise<boolean>((resolve) => {
      if (spawned.child.exitCode !== null) throw new Error(`slapd exited (${spawned.child.exitCode})`);
      const socket = connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => {
        socket.destroy();
        resolve(false);
      });
    });
  await failWithOutput(spawned, until(`slapd to listen on ${port}`, listening, Boolean, { tries: 400, everyMs: 50 }));
}

export type Slapd = {
  /** ldap:// (StartTLS available) and ldaps:// addresses. */
  ldapUrl: string;
  ldapsUrl: string;
  /** The test CA's certificate (PEM) the server's certificate chains to. */
  caPem: string;
  /** Makes `uid` a member of group `cn` (add) or no longer one (remove), as an administrator would. */
  setMember(cn: string, uid: string, member: boolean): Promise<void>;
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
};

export async function startSlapd(people: DirectoryPerson[], groups: DirectoryGroup[]): Promise<Slapd> {
  const dir = mkdtempSync(join(tmpdir(), "netkeep-slapd-"));
  mkdirSync(join(dir, "db"));
  const caPem = makeCertificates(dir);
  const [ldapPort, ldapsPort] = [await freePort(), await freePort()];
  const conf = join(dir, "slapd.conf");
  writeFileSync(
    conf,
    [
      ...["core", "cosine", "inetorgperson"].map((s) => `include /etc/ldap/schema/${s}.schema`),
      "modulepath /usr/lib/ldap",
      "moduleload back_mdb",
      `pidfile ${join(dir, "slapd.pid")}`,
      `TLSCACertificateFile ${join(dir, "ca.pem")}`,
      `TLSCertificateFile ${join(dir, "server.pem")}`,
      `TLSCertificateKeyFile ${join(dir, "server.key")}`,
      "database mdb",
      `suffix "${SUFFIX}"`,
      `rootdn "${ADMIN_DN}"`,
      `rootpw ${ADMIN_PASSWORD}`,
      `directory ${join(dir, "db")}`,
      "maxsize 10485760",
      "access to attrs=userPassword by anonymous auth by * none",
      `access to * by dn.exact="${SERVICE_DN}" read by * none`,
    ].join("\n") + "\n",
  );
  writeFileSync(join(dir, "data.ldif"), ldif(people, groups));
  execFileSync(SLAPADD, ["-f", conf, "-l", join(dir, "data.ldif")], { stdio: ["ignore", "ignore", "pipe"] });
  let spawned: Spawned | undefined;
  const ldapUrl = `ldap://127.0.0.1:${ldapPort}`;
  const ldapsUrl = `ldaps://127.0.0.1:${ldapsPort}`;
  const launch = async () => {
    // -d 0: stay in the foreground (a child the test owns) and log nothing.
    spawned = start(SLAPD, ["-f", conf, "-h", `${ldapUrl}/ ${ldapsUrl}/`, "-d", "0"], {});
    await waitForPort(ldapPort, spawned);
    await waitForPort(ldapsPort, spawned);
  };
  const halt = async () => {
    if (!spawned || spawned.child.exitCode !== null) return;
    stopGroup(spawned);
    await spawned.exited;
  };
  await launch();
  return {
    ldapUrl,
    ldapsUrl,
    caPem,
    async setMember(cn, uid, member) {
      const admin = new Client({ url: ldapUrl });
      try {
        await admin.bind(ADMIN_DN, ADMIN_PASSWORD);
        await admin.modify(
          groupDn(cn),
          new Change({
            operation: member ? "add" : "delete",
            modification: new Attribute({ type: "member", values: [userDn(uid)] }),
          }),
        );
      } finally {
        await admin.unbind();
      }
    },
    stop: halt,
    start: launch,
    async close() {
      await halt();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

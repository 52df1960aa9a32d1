import { describe, expect, it } from "vitest";
import { findGenericSecrets, maskGenericSecrets, SECRET_MARKER, XML_SECRET_MARKER } from "./secret-grammar.ts";
import { parseSecretExample } from "./secret-examples.ts";

/**
 * The generic layer by dialect: each `mask` case is a configuration excerpt with its secret values marked
 * [[like this]] (as a template rule's example is); it must lose exactly those, each for one marker, and keep every
 * other character. Each `keep` case holds no secret and must come out unchanged.
 */
const DIALECTS: Record<string, { mask: string[]; keep: string[] }> = {
  "Cisco IOS / IOS-XE": {
    mask: [
      "enable secret 9 [[$9$nhEmQVczB7dqsO$X.HsgL6x1il0RxkOSSvyQYwucySCt7qFm4v7pqCxkKM]]",
      "enable password level 2 [[Lvl2-Pw]]",
      "enable secret level 15 5 [[$1$mERr$hx5rVt7rPNoS4wqbXKX7m0]]",
      "username u privilege 15 nohangup password 0 [[User-Pw-1]]",
      "username admin privilege 15 algorithm-type scrypt secret 9 [[$9$2MJBozw/9R3UsU$2lFhgyGbC0hCQAIHIcbr9rh0xqqfAZU7LKSlRpkSfbs]]",
      "line vty 0 4\n password 7 [[0822455D0A16]]\n login",
      " ip ospf message-digest-key 1 md5 0 [[Ospf-Md5-1]]",
      " ip ospf authentication-key 7 [[045802150C2E]]",
      "ntp authentication-key 1 md5 [[Ntp-Key-1]] 7",
      "ntp authentication-key 42 hmac-sha2-256 [[Ntp-Key-42]]",
      " standby 1 authentication [[Hsrp-Text]]",
      " standby 2 authentication text [[Hsrp-Text-2]]",
      " standby 3 authentication md5 key-string 7 [[104D000A0618]]",
      " vrrp 1 authentication text [[Vrrp-Text]]",
      " glbp 1 authentication text [[Glbp-Text]]",
      " neighbor 192.0.2.1 password 7 [[02050D480809]]",
      "mpls ldp neighbor 10.0.0.1 password [[Ldp-Pw]]",
      " ppp chap password 7 [[0822455D0A16]]",
      " ppp pap sent-username dialer password 0 [[Pap-Pw]]",
      "ip ftp password [[Ftp-Pw]]",
      "key chain OSPF\n key 1\n  key-string 7 [[0822455D0A16]]",
      "tacacs-server host 10.0.0.5 key 7 [[0822455D0A16]]",
      "radius-server host 10.0.0.6 auth-port 1645 acct-port 1646 key [[Radius-Key]]",
      "tacacs server TAC1\n address ipv4 10.0.0.5\n key 7 [[0822455D0A16]]",
      "aaa group server tacacs+ TAC\n server-private 10.0.0.5 key 7 [[0822455D0A16]]",
      "crypto isakmp key 6 [[FLgBaJHXdYY_AcHZZMgQ_RhTDJXHUBAAB]] address 192.0.2.2",
      "crypto keyring KR\n  pre-shared-key address 192.0.2.7 key [[Keyring-Psk]]",
      "crypto ikev2 keyring K2\n peer P\n  address 192.0.2.8\n  pre-shared-key local 0 [[Ikev2-Local]]",
      "snmp-server community [[Ios-Comm]] RO 10",
      "snmp-server host 192.0.2.9 version 2c [[Trap-Comm]]",
      "snmp-server host 192.0.2.9 informs version 2c [[Inform-Comm]] udp-port 1162",
      "snmp-server user opsuser OPS v3 auth sha [[Auth-Key-1]] priv aes 128 [[Priv-Key-1]]",
      "rf-switch snmp-community [[Rf-Comm]]",
      "key config-key password-encrypt [[Master-Key-1]]",
      " wpa-psk ascii 7 [[0822455D0A16]]",
      "archive\n path scp://backup:[[Arch-Pw]]@192.0.2.10/r1",
      'interface Gi0/1\n description 19" rack "A\ninterface Gi0/2\n ip ospf authentication-key [[After-Odd-Quote]]',
      "interface Tunnel0\n ip nhrp authentication [[Nhrp-Pw]]",
      "interface Gi0/1\n ipv6 ospf authentication ipsec spi 256 md5 0 [[0123456789ABCDEF0123456789ABCDEF]]",
      "interface Gi0/1\n ospfv3 encryption ipsec spi 257 esp aes-cbc 128 0 [[0123456789ABCDEF0123456789ABCDEF]] sha1 0 [[0123456789ABCDEF0123456789ABCDEF01234567]]",
      "interface Gi0/1\n authentication key eigrp 100 [[Eigrp-Key]] key-id 1",
    ],
    keep: [
      "key chain OSPF-KEYS\n key 1\n key 2",
      "ntp server 10.1.1.10 key 1",
      "ntp trusted-key 10 - 12",
      "ntp authenticate",
      " tunnel key 123",
      "crypto key generate rsa modulus 2048",
      "crypto key param rsa",
      "crypto key pubkey-chain rsa",
      "service password-encryption",
      "password encryption aes",
      "security passwords min-length 8",
      "username readonly privilege 1 nopassword",
      " login authentication default",
      " ip ospf authentication message-digest",
      " ip ospf authentication key-chain KC1",
      " standby 1 authentication md5 key-chain HSRP-KC",
      "aaa authentication login default group tacacs+ local",
      " ppp authentication chap",
      "crypto isakmp policy 10\n hash md5\n authentication pre-share",
      "crypto ipsec transform-set ts1 esp-aes 256 esp-md5-hmac",
      "snmp-server host 192.0.2.9 version 3 priv opsuser",
      "snmp-server group OPS v3 priv read V1 write V2",
      "ip community-list standard CL permit 65000:1",
      "route-map RM permit 10\n set community 65000:100 additive\n match community CL",
      " neighbor 192.0.2.1 send-community both",
      " description password and key rotation link",
      "! a comment on key 1 and password rules",
      "interface Vlan7\n ip address 10.7.0.1 255.255.255.0",
      "banner motd ^C\nAuthorized access only. Password is never shared.\nKey holders: see wiki\n^C\nline vty 0 4",
      "banner login ^CNo secret here, no password either^C",
      'interface Gi0/1\n description 19" rack, row 2',
      " authentication port-control auto\n dot1x pae authenticator",
    ],
  },
  "Cisco NX-OS": {
    mask: [
      "username admin password 5 [[$5$Ojx2pHng$e8TCv0Pvj0mLYK2hgNdVUvfw3Urn4PCQf1U3pqDfd7A]] role network-admin",
      'tacacs-server key 7 "[[Tac-Key-7]]"',
      "tacacs-server host 10.0.0.5 key 7 [[Tac-Host-Key]]",
      "key chain SOME_CHAIN\n  key 123\n    key-string 7 [[BA7F1540BA7F1540]]",
      "interface Ethernet1/1\n  ip ospf message-digest-key 1 md5 3 [[Nx-Md5]]",
      "ntp authentication-key 1 md5 [[012345678Abz]] 7",
      "snmp-server user admin network-admin auth md5 [[0x1a2b3c4d]] priv [[0x5e6f7a8b]] localizedkey",
      "snmp-server host 192.0.2.1 traps version 2c [[Nx-Trap]] udp-port 162",
      "vrrp 10\n  authentication text [[Vrrp-Nx]]",
      "router bgp 65000\n  neighbor 192.0.2.2\n    password 3 [[Bgp-3des]]",
      "interface Vlan10\n  hsrp 10\n    authentication md5 key-string [[Hsrp-Md5]]",
    ],
    keep: [
      "ntp server 192.0.2.3 use-vrf management key 12345 minpoll 10 maxpoll 10",
      "ntp trusted-key 12345",
      "password strength-check",
      "userpassphrase min-length 23 max-length 45",
      "  ip authentication key-chain eigrp NAMED_123 SOME_CHAIN",
      "snmp-server host 192.0.2.1 use-vrf management",
      "ssh key rsa 2048",
    ],
  },
  "Arista EOS": {
    mask: [
      "username admin privilege 15 role network-admin secret sha512 [[$6$abcdefgh$ijklmnopqrstuvwxyz]]",
      "enable password sha512 [[$6$xyz12345$uvwuvwuvw]]",
      "snmp-server community [[Eos-Comm]] ro SNMP-ACL",
      "snmp-server host 10.0.0.9 vrf MGMT version 2c [[Eos-Trap]]",
      "snmp-server user U G v3 localized 0011223344 auth sha [[Eos-Auth]] priv aes [[Eos-Priv]]",
      "router bgp 65000\n   neighbor 10.0.0.1 password 7 [[Eos-Bgp]]",
      "tacacs-server host 10.0.0.5 key 7 [[Eos-Tac]]",
      "interface Ethernet1\n   ip ospf authentication-key 7 [[Eos-Ospf]]",
      "daemon TerminAttr\n   exec /usr/bin/TerminAttr -cvaddr=192.0.2.20:9910 -cvauth=key,[[CvOnboardKey1]] -taillogs",
    ],
    keep: [
      "management ssh\n  authentication mode password\n  idle-timeout 600",
      "ntp server 10.0.0.1 key 5",
      "ip community-list CL permit 65000:1",
      "banner motd\nthe password policy lives in the wiki\nEOF",
      "daemon TerminAttr\n   exec /usr/bin/TerminAttr -cvaddr=10.0.0.9:9910 -cvauth=token,/tmp/token -taillogs",
    ],
  },
  "Cisco IOS-XR": {
    mask: [
      "username netops\n group root-lr\n secret 10 [[$6$XrSalt$XrAdminSecretHash]]",
      "router ospf 1\n area 0\n  interface Gi0/0/0/0\n   message-digest-key 20 md5 encrypted [[FF00FF00FF00FF00FF00FF]]",
      "router ospf 1\n area 0\n  authentication-key encrypted [[0822XrAuthKey]]",
      "key chain KC\n key 1\n  key-string password [[13061E010803]]",
      "router isis CORE\n lsp-password hmac-md5 encrypted [[13061EXrLspPw]] level 2",
      "snmp-server community [[XrRoComm]] RO SystemOwner",
      "snmp-server user netops NETOPS v3 auth sha encrypted [[1417XrAuthKey]] priv aes 128 encrypted [[0306XrPrivKey]]",
      "tacacs-server host 10.0.0.5 port 49\n key 7 [[1511XrTacKey7]]",
      "router vrrp\n interface Gi0/0/0/1\n  address-family ipv4\n   vrrp 1\n    text-authentication [[Xr-Vrrp]]",
      "router hsrp\n interface Gi0/0/0/1\n  address-family ipv4\n   hsrp 1\n    authentication [[Xr-Hsrp]]",
    ],
    keep: [
      "route-policy RP\n  if community matches-any (65000:1) then\n    set community (1234:666, 1234:$hub_comm) additive\n    pass\n  endif\nend-policy",
      "router isis CORE\n hello-password keychain ISIS-KC",
      "router bgp 65000\n neighbor 10.0.0.1\n  password inheritance-disable",
      "community-set CS\n  65000:1\nend-set",
    ],
  },
  "Cisco ASA": {
    mask: [
      "enable password [[8Ry2YjIyt7RRXU24]] encrypted",
      "passwd [[2KFQnbNIdI.2KYOU]] encrypted",
      "username admin password [[kT8Vtu.8tbpZb9Gu]] encrypted privilege 15",
      "aaa-server TAC (inside) host 10.0.0.5\n key [[Asa-Tac]]",
      "tunnel-group 192.0.2.1 ipsec-attributes\n ikev1 pre-shared-key [[Asa-Psk]]",
      "tunnel-group 192.0.2.1 ipsec-attributes\n ikev2 remote-authentication pre-shared-key [[Asa-Remote]]",
      "snmp-server host inside 10.0.0.9 community [[Asa-Trap]] version 2c",
      "ntp authentication-key 1 md5 [[Asa-Ntp]]",
      "failover key [[Asa-Fo]]",
      "aaa-server LDAP (inside) host 10.0.0.7\n ldap-login-password [[Ldap-Pw]]",
    ],
    keep: [
      "password-policy minimum-length 8",
      "snmp-server host inside 10.0.0.9 version 3 opsuser",
      "crypto ikev1 policy 10\n authentication pre-share\n hash sha",
      "ssh key-exchange group dh-group14-sha1",
    ],
  },
  "Juniper Junos (set)": {
    mask: [
      'set system root-authentication encrypted-password "[[$6$Sa1t$JunosRootHash]]"',
      'set system login user admin authentication encrypted-password "[[$1$67Q0XA3z$YqiBW/xxKWr74oHPXEkIv1]]"',
      'set system tacplus-server 10.0.0.5 secret "[[$9$czBSK87-wgoG]]"',
      'set system radius-server 10.0.0.6 secret "[[$9$radius0Secret]]"',
      "set snmp community [[Junos-Comm]] authorization read-only",
      'set snmp v3 usm local-engine user U authentication-sha authentication-key "[[$9$UsmAuthKey1]]"',
      'set snmp v3 usm local-engine user U privacy-aes128 privacy-key "[[$9$UsmPrivKey1]]"',
      'set security ike policy P pre-shared-key ascii-text "[[$9$/E6g9tO1IcSrvfTCu1hKv-VwgJD]]"',
      'set protocols ospf area 0 interface ge-0/0/0.0 authentication md5 1 key "[[$9$SnXe87GUHfT3wYk]]"',
      "set protocols bgp group ext authentication-key [[Bgp-Junos]]",
      "set security authentication-key-chains key-chain KC key 0 secret [[Kc-Secret]]",
      'set protocols isis interface ge-0/0/0.0 level 2 hello-authentication-key "[[$9$tc4xpORrlMxNbhSd]]"',
      'set system ntp authentication-key 1 type md5 value "[[$9$NtpKeyValue]]"',
      'set protocols vrrp group 1 authentication-key "[[$9$VrrpKey]]"',
      'set system archival configuration archive-sites "scp://backup:[[Arch-Pw-1]]@198.51.100.5/configs"',
    ],
    keep: [
      "set system login password minimum-length 8",
      "set system login password format sha512",
      "set system login user bootstrap authentication plain-text-password",
      'set system login user u authentication ssh-rsa "ssh-rsa AAAAB3NzaC1yc2E u@h"',
      "set policy-options community MATCHED members 1",
      "set policy-options community UNUSED invert-match",
      "set policy-options policy-statement P term T then community add ADDED",
      "set security authentication-key-chains key-chain KC key 0 start-time 2011-6-23.20:19:33",
      "set security authentication-key-chains key-chain KC key 0 algorithm hmac-sha-1",
      "set protocols bgp group ext authentication-key-chain bgp-auth",
      "set system ntp server 10.0.0.1 key 1",
      "set system ntp trusted-key 1",
      "set interfaces gr-0/0/0 unit 0 tunnel key 123",
      "set system authentication-order [ password radius ]",
      "set system services ssh root-login deny-password",
      "set security ipsec policy P perfect-forward-secrecy keys group1",
    ],
  },
  "Juniper Junos (hierarchical)": {
    mask: [
      'system {\n    root-authentication {\n        encrypted-password "[[$6$Sa1t$JunosRootHash]]"; ## SECRET-DATA\n    }\n}',
      'system {\n    tacplus-server {\n        10.0.0.5 secret "[[$9$czBSK87-wgoG]]";\n    }\n}',
      "snmp {\n    community [[Junos-Comm]] {\n        authorization read-only;\n    }\n}",
      'protocols {\n    ospf {\n        area 0.0.0.0 {\n            interface ge-0/0/0.0 {\n                authentication {\n                    md5 1 key "[[$9$SnXe87GUHfT3wYk]]";\n                }\n            }\n        }\n    }\n}',
      "protocols {\n    bgp {\n        authentication-key [[Bgp-Junos]];\n    }\n}",
      'security {\n    ike {\n        policy P {\n            pre-shared-key ascii-text "[[$9$abcdefgHIJ]]"; ## SECRET-DATA\n        }\n    }\n}',
    ],
    keep: [
      "system {\n    login {\n        password {\n            minimum-length 8;\n            format sha512;\n        }\n    }\n}",
      "policy-options {\n    community CUSTOMERS {\n        members 65000:100;\n    }\n    community C2 members [ 65000:1 65000:2 ];\n}",
      "system {\n    ntp {\n        server 10.0.0.1 key 1;\n    }\n}",
    ],
  },
  "Palo Alto PAN-OS": {
    mask: [
      "mgt-config {\n  users {\n    admin {\n      phash [[$1$vqgaovyp$BA8m4uld.cxY2T/n9ihK2.]];\n    }\n  }\n}",
      "ike {\n  gateway GW {\n    authentication {\n      pre-shared-key {\n        key [[-AQ==PaIkePsk=]];\n      }\n    }\n  }\n}",
      "snmp-setting {\n  access-setting {\n    version {\n      v2c {\n        snmp-community-string [[Pa-Comm]];\n      }\n    }\n  }\n}",
      "set mgt-config users admin phash [[$5$PaSalt$PaAdminHash]]",
      "set network ike gateway GW authentication pre-shared-key key [[-AQ==PaSetPsk=]]",
      "set deviceconfig system snmp-setting access-setting version v3 users U authpwd [[-AQ==AuthPwd=]] privpwd [[-AQ==PrivPwd=]]",
      "set shared server-profile radius R server S secret [[-AQ==RadSecret=]]",
    ],
    keep: [
      "set deviceconfig setting management initcfg public-key c3NoLXJzYQ",
      "set mgt-config users admin public-key c3NoLX",
      "phash-lookalike-host {",
      "set config shared authentication-profile RADIUS multi-factor-auth mfa-enable no",
    ],
  },
  "Fortinet FortiOS": {
    mask: [
      'config system admin\n    edit "admin"\n        set password ENC [[SH2nlSm9QL9tapcHPXIqAXvX7vBJuuqu22hpa0JX0sBuKIo7z2g0Kz/+0KyH4E=]]\n    next\nend',
      'config vpn ipsec phase1-interface\n    edit "VPN1"\n        set psksecret ENC [[Tm9TZWNyZXRIZXJlQmFzZTY0]]\n    next\nend',
      'config system snmp community\n    edit 1\n        set name "[[Fgt-Comm]]"\n    next\nend',
      'config user radius\n    edit "R"\n        set secret [[Plain-Radius]]\n    next\nend',
      'config system snmp user\n    edit "u"\n        set auth-pwd ENC [[QXV0aFB3ZEJsb2I=]]\n        set priv-pwd ENC [[UHJpdlB3ZEJsb2I=]]\n    next\nend',
      'config vpn certificate local\n    edit "c"\n        set private-key "-----BEGIN ENCRYPTED PRIVATE KEY-----\n[[MIIFHzBJBgkqhkiG9w0BBQ0wPDAbBgkqhkiG9w0BBQwwDgQI]]\n-----END ENCRYPTED PRIVATE KEY-----"\n    next\nend',
    ],
    keep: [
      "        set api-key ENC <removed>",
      "    set encryption AES256",
      "        set authgrp read-write",
      'config system replacemsg auth "auth-password-page"',
      '        set comment "Authentication service."',
      "config system snmp sysinfo\n    set status enable\nend",
      'config system replacemsg admin "pre_admin-disclaimer-text"\n    set buffer "<p>Enter your password below.</p>\nYour password expires soon; ask the secret desk\n<input type=password name=password>"\nend',
      '        set name "LAN"',
    ],
  },
  "F5 TMOS": {
    mask: [
      "ltm profile client-ssl /Common/p {\n    passphrase [[$M$TheQuickBrownFoxJumpsOverTheLazyDog=]]\n}",
      "auth user admin {\n    encrypted-password [[$6$F5Salt$F5AdminHash]]\n}",
      "sys snmp {\n    communities {\n        c1 {\n            community-name [[F5-Comm]]\n            source default\n        }\n    }\n}",
      "auth radius-server /Common/r {\n    secret [[$M$RadSecretBlob=]]\n    server 10.0.0.6\n}",
      "sys snmp {\n    users {\n        u {\n            auth-password [[$M$AuthBlob==]]\n            privacy-password [[$M$PrivBlob==]]\n        }\n    }\n}",
    ],
    keep: [
      "ltm profile client-ssl /Common/p {\n    cert-key-chain {\n        default {\n            key foobar\n        }\n    }\n    key /Common/dtdi.key\n}",
      "cm key /Common/dtca.key {\n    checksum SHA1:1708:074c7e4f35ef59c343d02ffec595e55546bdb130\n    key-size 2048\n}",
      'when CLIENTSSL_HANDSHAKE {\n      log local0. "TLS handshake took $delta milliseconds"\n}',
      "    ssl-sign-hash any",
      'ltm rule /Common/cache_key {\n    when HTTP_REQUEST {\n        set key "$host$uri"\n        set password [HTTP::header value X-Pass]\n    }\n}',
    ],
  },
  "Nokia SR OS": {
    mask: [
      'system\n    security\n        user "admin"\n            password "[[$2y$10$TQrZlpBDra86.qoexZUzQeBXDY1FcdDhGWdD9lLxMuFyPVSm0OGy6]]"\n        exit',
      'system\n    security\n        snmp\n            community "[[uTdc9j48PBRkxn5DcSjchk]]" hash2 rwa version both\n        exit',
      'router\n    bgp\n        authentication-key "[[Z3e2ABFBgYvOhzYf]]" hash2',
      'system {\n    security {\n        snmp {\n            community "[[Md-Comm]]" {\n                access-permissions r\n            }\n        }\n    }\n}',
    ],
    keep: [
      'policy-options {\n        community "from-r2-100" {\n            member "65000:100" { }\n        }\n}',
      'policy-options\n    begin\n    community "tag" members "65000:1"\n    commit\nexit',
    ],
  },
  "HPE Comware / Huawei VRP": {
    mask: [
      "local-user admin class manage\n password hash [[$h$6$Comware$Hash0123456789]]",
      "local-user admin password irreversible-cipher [[$1a$VrpSalt$VrpHash0123$]]",
      "snmp-agent community read cipher [[%^%#VrpCipherText%^%#]]",
      "snmp-agent community write [[Comware-Rw]]",
      "snmp-agent usm-user v3 U G authentication-mode sha [[Cw-Auth]] privacy-mode aes128 [[Cw-Priv]]",
      "interface GigabitEthernet0/0/1\n ospf authentication-mode md5 1 cipher [[%^%#OspfCipher%^%#]]",
      "radius scheme R\n key authentication simple [[Cw-Rad-Key]]",
      "radius-server shared-key cipher [[%^%#RadCipher%^%#]]",
      "bgp 65000\n peer 10.0.0.1 password cipher [[%^%#BgpCipher%^%#]]",
      "super password level 3 cipher [[%$%$SuperCipher%$%$]]",
      "ike keychain K\n pre-shared-key address 10.0.0.1 255.255.255.255 key cipher [[$c$3$KeychainCipher==]]",
    ],
    keep: [
      "user-interface vty 0 4\n authentication-mode aaa",
      "user-interface vty 0 4\n authentication-mode password",
      " ospf authentication-mode keychain KC",
      "ntp-service authentication enable",
      "password-control length 10",
    ],
  },
  "MikroTik RouterOS": {
    mask: [
      "/ppp secret\nadd name=u1 password=[[Ros-Ppp-1]] service=pppoe",
      "/snmp community\nset [ find default=yes ] name=[[Ros-Comm-7]]",
      "/ip ipsec identity\nadd peer=p1 secret=[[Ros-Ipsec]]",
      "/interface wireless security-profiles\nset [ find default=yes ] wpa2-pre-shared-key=[[Ros-Wpa2]]",
      '/interface wireguard\nadd name=wg0 private-key="[[aGVsbG8gd29ybGQgd2lyZWd1YXJkIGtleQ=]]"',
    ],
    keep: [
      "/system identity\nset name=router1",
      '/interface wireguard peers\nadd interface=wg0 public-key="cHVibGljIGtleSBoZXJl="',
      "/ip address\nadd address=192.0.2.1/24 interface=ether1",
    ],
  },
  "Cumulus / FRR": {
    mask: [
      "password [[zebra]]",
      "enable password [[zebra-en]]",
      "router bgp 65000\n neighbor 10.0.0.1 password [[Frr-Bgp]]",
      "interface swp1\n ip ospf message-digest-key 1 md5 [[Frr-Md5]]",
      "key chain KC\n key 1\n  key-string [[Frr-Chain]]",
      "router isis 1\n area-password md5 [[Frr-Area]]",
      "interface swp2\n ip rip authentication string [[Frr-Rip]]",
      "net add snmp-server readonly-community [[Cl-Comm]] access any",
      "rocommunity [[Snmpd-Comm]] default",
    ],
    keep: [
      "route-map RM permit 10\n set community 1:1 additive\n match community standard_Comm1",
      "key chain KC\n key 1",
      " ip rip authentication mode md5",
      "bgp community-list standard CL permit 65000:1",
    ],
  },
  "Check Point Gaia": {
    mask: [
      "set user admin password-hash [[$6$CpSalt$CpAdminHash]]",
      "set expert-password-hash [[$6$CpExpert$Hash1234]]",
      "set snmp community [[Cp-Comm]] read-only",
      "add snmp usm user U security-level authPriv auth-pass-type SHA1 auth-pass-phrase [[Cp-Auth]] privacy-pass-type AES privacy-pass-phrase [[Cp-Priv]]",
      "add aaa tacacs-servers priority 1 server 10.0.0.51 key [[Cp-Tac]] timeout 5",
      "add aaa radius-servers priority 1 host 10.30.0.50 port 1812 prot PAP secret [[Cp-Rad]] timeout 3",
      "set ospf instance default interface eth2 authtype md5 key 1 secret [[Cp-Ospf]]",
      "set ospf instance default interface eth3 authtype cryptographic key 2 algorithm md5 secret [[Cp-Ospf-2]]",
    ],
    keep: [
      "set bonding group 0 xmit-hash-policy layer2",
      'set snmp contact "noc community desk"',
      "set password-controls min-password-length 8",
    ],
  },
  "Other families (the layer runs after every template)": {
    mask: [
      "\t\t<password>[[pfSense-Pw]]</password>",
      "      <phash>[[$1$abcdefgh$ijklmnopqrstuv]]</phash>",
      "snmp-server host 10.50.0.9 version v2c 2 [[Ruckus-Comm]] port 162",
      "snmp-server host 10.20.0.40 trap version 2c [[Zte-Comm]] enable NOTIFICATIONS target-addr-name nms",
      "   security wpa psk set-key ascii 0 [[Wlan-Psk]]",
      "set system login user ubnt authentication encrypted-password [[$6$EdgeSalt$EdgeOsHash]]",
    ],
    keep: [
      "sysLocation=FRA1 row 12, password safe cabinet",
      "\t\t<syslocation>password vault room 2</syslocation>",
      "      <description>Shared secret rotates yearly; password policy in wiki</description>",
      "config.users.user1.description Key holder account",
      " onu 1 desc cust-10023 password on file",
      'password operator user-name "ops" sha1',
      "config snmp community create <secret hidden>",
      "config wlan security wpa akm psk enable 1",
      "set system login user ubnt authentication public-keys admin@laptop key AAAAC3NzaPublicKeyData",
      " key *****",
      " snmp-agent community read cipher %^%#<secret removed>%^%#",
      "unset key protection enable",
      "    cli ftp password default <secret hidden>",
    ],
  },
};

/** The text with each [[value]] replaced by the marker: what the layer must make of it. */
// Inside XML markup (a line that starts with <) the marker is XML_SECRET_MARKER, so the stored XML stays well-formed.
const expectedMasked = (example: string) =>
  example
    .split("\n")
    .map((line) => (line.trimStart().startsWith("<") ? line.replace(/\[\[(.+?)\]\]/g, XML_SECRET_MARKER) : line))
    .join("\n")
    .replace(/\[\[([\s\S]+?)\]\]/g, (_, v: string) =>
      v
        .split("\n")
        .map(() => SECRET_MARKER)
        .join("\n"),
    );

describe("the generic masking layer, by dialect", () => {
  for (const [dialect, { mask, keep }] of Object.entries(DIALECTS)) {
    describe(dialect, () => {
      it.each(mask)("masks the value and only it: %s", (example) => {
        const { text } = parseSecretExample(example);
        expect(maskGenericSecrets(text)).toBe(expectedMasked(example));
      });
      it.each(keep)("keeps a statement with no secret word for word: %s", (text) => {
        expect(maskGenericSecrets(text)).toBe(text);
      });
    });
  }
});

describe("the generic masking layer", () => {
  const all = Object.values(DIALECTS)
    .flatMap((d) => d.mask.map((m) => parseSecretExample(m).text))
    .join("\n");

  it("changes nothing a second time (an already masked value stays as it is)", () => {
    const once = maskGenericSecrets(all);
    expect(once).not.toBe(all);
    expect(maskGenericSecrets(once)).toBe(once);
  });

  it("leaves a template's own marker alone, quoted or not", () => {
    for (const line of [
      "snmp-server community <configuration removed> ro",
      'set system tacplus-server 10.0.0.5 secret "<secret removed>"',
      " password 7 <secret hidden>",
      "        set api-key ENC <removed>",
    ]) {
      expect(maskGenericSecrets(line)).toBe(line);
    }
  });

  it("names the rule of every span and gives offsets into the text", () => {
    const text = "hostname r1\nenable secret 5 $1$mERr$hx5rVt7rPNoS4wqbXKX7m0\nsnmp-server community Comm-1 RO";
    const spans = findGenericSecrets(text);
    expect(spans.map((s) => [text.slice(s.start, s.end), s.rule])).toEqual([
      ["$1$mERr$hx5rVt7rPNoS4wqbXKX7m0", "secret"],
      ["Comm-1", "community"],
    ]);
  });

  it("finds a hash by its shape after any keyword, or none", () => {
    expect(maskGenericSecrets("set system custom-thing $6$abcdefgh$ijklmnopqrstuvwxyz0123")).toBe(
      `set system custom-thing ${SECRET_MARKER}`,
    );
    expect(maskGenericSecrets("foo-option 7 0822455D0A16")).toBe(`foo-option 7 ${SECRET_MARKER}`);
  });
});

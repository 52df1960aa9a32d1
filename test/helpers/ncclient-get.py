"""get-config of running through Debian's python3-ncclient, an independent NETCONF client: proves that the fake
device (test/helpers/fake-netconf.ts) speaks RFC 6241/6242 as real clients expect. Prints one JSON object."""
import json
import sys

from ncclient import manager
from ncclient.operations import RPCError

host, port, username, password = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
subtree = sys.argv[5] if len(sys.argv) > 5 else ""
out = {}
with manager.connect(host=host, port=port, username=username, password=password, hostkey_verify=False,
                     allow_agent=False, look_for_keys=False, timeout=20) as m:
    out["session_id"] = m.session_id
    out["capabilities"] = sorted(m.server_capabilities)
    try:
        reply = m.get_config(source="running", filter=("subtree", subtree) if subtree else None)
        out["data"] = reply.data_xml
    except RPCError as err:
        out["rpc_error"] = {"tag": err.tag, "message": err.message}
    # The framing both hellos agreed on: ncclient switches its session to chunks for base:1.1.
    out["framing"] = "1.1" if m._session._base == 2 else "1.0"  # NetconfBase.BASE_11
print(json.dumps(out))

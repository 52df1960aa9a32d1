"""A loopback SMTP server for tests (Debian's python3-aiosmtpd): every message it accepts is written as one JSON
file into the directory given: the envelope (mail_from, rcpt_tos) and the message as Python's own e-mail parser
reads it (decoded subject, From and To headers, the text/plain and text/html parts, decoded), then renamed into place so a reader never sees half a
file. Prints "ready <port>" once listening; stops on SIGTERM or when stdin closes."""
import json, os, sys
from email import message_from_bytes, policy
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

out_dir, port = sys.argv[1], int(sys.argv[2])
# With a user and password (argv 3 and 4) the server requires AUTH (PLAIN or LOGIN) before it takes a message.
credentials = (sys.argv[3].encode(), sys.argv[4].encode()) if len(sys.argv) > 4 else None

def authenticate(server, session, envelope, mechanism, auth_data):
    if isinstance(auth_data, LoginPassword) and (auth_data.login, auth_data.password) == credentials:
        return AuthResult(success=True)
    # An explicit reply: aiosmtpd 1.4's default answer to a refused login never reaches the client.
    return AuthResult(success=False, handled=False, message="535 5.7.8 Authentication credentials invalid")

class Sink:
    count = 0
    async def handle_DATA(self, server, session, envelope):
        Sink.count += 1
        path = os.path.join(out_dir, f"{Sink.count:05d}.json")
        message = message_from_bytes(envelope.original_content or envelope.content, policy=policy.default)
        text = message.get_body(preferencelist=("plain",))
        html = message.get_body(preferencelist=("html",))
        with open(path + ".tmp", "w") as f:
            json.dump({"mail_from": envelope.mail_from, "rcpt_tos": envelope.rcpt_tos,
                       "subject": str(message["subject"]), "from": str(message["from"]), "to": str(message["to"]),
                       "content_type": message.get_content_type(),
                       "text": text.get_content() if text else None, "html": html.get_content() if html else None}, f)
        os.rename(path + ".tmp", path)
        return "250 Message accepted for delivery"

auth = {"authenticator": authenticate, "auth_required": True, "auth_require_tls": False} if credentials else {}
controller = Controller(Sink(), hostname="127.0.0.1", port=port, **auth)
controller.start()
print(f"ready {port}", flush=True)
try:
    sys.stdin.read()
finally:
    controller.stop()

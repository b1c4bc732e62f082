import Foundation
import Glibc

/// aiosmtpd (PyPI), an SMTP server written by others, run from `.build-py` with STARTTLS
/// required and AUTH only over TLS, on a certificate for 127.0.0.1 and localhost that the
/// `openssl` tool makes from a throwaway CA. Each message it accepts is read back with
/// Python's `email` package and written to `<folder>/message-N.json`: what the envelope said,
/// whether TLS and AUTH were on, the headers and parts as `email` understands them, and the
/// raw bytes after the server undid the dot-stuffing. A recipient whose local part is
/// `refuse-550` or `refuse-451` is refused at `RCPT TO` with that code (the mail outbox's tests).
public final class AiosmtpdServer: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public let folder: String
    public let port: UInt16
    /// The throwaway CA, PEM.
    public let caPEM: String
    private let child: ChildProcess

    /// - Parameter mechanisms: the AUTH mechanisms offered (`PLAIN`, `LOGIN`).
    public init(user: String, password: String, mechanisms: [String] = ["PLAIN", "LOGIN"]) async throws {
        folder = NSTemporaryDirectory() + "siwa-aiosmtpd-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        child = try ChildProcess(
            executable: PythonTools.python, arguments: ["-c", Self.script, folder, user, password, mechanisms.joined(separator: ",")],
            environment: ProcessInfo.processInfo.environment)
        var port: UInt16?
        // Making the certificates and starting takes a second or two; a busy machine, more.
        for _ in 0..<1200 where port == nil {
            if let line = child.stdoutText.split(separator: "\n").first(where: { $0.hasPrefix("PORT ") }) {
                port = UInt16(line.dropFirst(5))
                break
            }
            guard child.isRunning else {
                throw Failure(description: "aiosmtpd did not start (is it in .build-py? Scripts/python-tools aiosmtpd): \(child.stderrText)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        guard let port else { throw Failure(description: "aiosmtpd did not say its port: \(child.stderrText)") }
        self.port = port
        caPEM = try String(contentsOfFile: folder + "/ca.pem", encoding: .utf8)
    }

    deinit {
        child.signal(SIGTERM)
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// The `number`th message accepted (from 1), waiting for it a bounded time.
    public func message(_ number: Int) async throws -> [String: Any] {
        let path = "\(folder)/message-\(number).json"
        for _ in 0..<600 {
            if let data = FileManager.default.contents(atPath: path) {
                return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw Failure(description: "no message \(number) arrived: \(child.stderrText)")
    }

    /// Whether message `number` (from 1) has arrived, without waiting.
    public func hasMessage(_ number: Int) -> Bool {
        FileManager.default.fileExists(atPath: "\(folder)/message-\(number).json")
    }

    public var log: String { child.stderrText }

    static let script = #"""
        import asyncio, base64, email, email.policy, json, os, ssl, subprocess, sys
        from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword

        folder, user, password, mechanisms = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(",")

        def openssl(*args):
            subprocess.run(["openssl", *args], check=True, capture_output=True)

        # A throwaway CA, and a server certificate naming 127.0.0.1 and localhost in its
        # subjectAltName, made by the openssl tool rather than by the code under test.
        key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
        openssl("req", "-x509", *key, "-keyout", f"{folder}/ca.key", "-out", f"{folder}/ca.pem", "-days", "2",
                "-subj", "/CN=aiosmtpd throwaway CA", "-addext", "basicConstraints=critical,CA:TRUE",
                "-addext", "keyUsage=critical,keyCertSign,cRLSign")
        openssl("req", *key, "-keyout", f"{folder}/server.key", "-out", f"{folder}/server.csr", "-subj", "/CN=aiosmtpd test server")
        with open(f"{folder}/server.ext", "w") as f:
            f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=critical,CA:FALSE\n"
                    "keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n")
        openssl("x509", "-req", "-in", f"{folder}/server.csr", "-CA", f"{folder}/ca.pem", "-CAkey", f"{folder}/ca.key",
                "-CAcreateserial", "-out", f"{folder}/server.pem", "-days", "2", "-extfile", f"{folder}/server.ext")
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(f"{folder}/server.pem", f"{folder}/server.key")

        def authenticator(server, session, envelope, mechanism, auth_data):
            ok = (isinstance(auth_data, LoginPassword) and auth_data.login == user.encode()
                  and auth_data.password == password.encode())
            # handled=False: aiosmtpd answers a failure itself (535).
            return AuthResult(success=ok, handled=False)

        class Handler:
            count = 0
            async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
                local = address.split("@")[0]
                if local == "refuse-550":
                    return "550 5.1.1 No such user here"
                if local == "refuse-451":
                    return "451 4.3.0 Try again later"
                envelope.rcpt_tos.append(address)
                return "250 OK"

            async def handle_DATA(self, server, session, envelope):
                raw = envelope.original_content
                message = email.message_from_bytes(raw, policy=email.policy.default)
                parts = []
                defects = [str(d) for d in message.defects]
                for part in message.walk():
                    defects += [str(d) for d in part.defects]
                    if part.is_multipart():
                        continue
                    parts.append({"type": part.get_content_type(), "charset": part.get_content_charset(),
                                  "encoding": part["Content-Transfer-Encoding"], "content": part.get_content()})
                def mailbox(header):
                    return [{"name": a.display_name, "address": a.addr_spec} for a in message[header].addresses]
                Handler.count += 1
                summary = {
                    "mail_from": envelope.mail_from, "rcpt_tos": envelope.rcpt_tos,
                    "tls": session.ssl is not None, "authenticated": bool(session.authenticated),
                    "from": mailbox("From"), "to": mailbox("To"), "subject": str(message["Subject"]),
                    "date": int(message["Date"].datetime.timestamp()), "message_id": message["Message-ID"],
                    "mime_version": message["MIME-Version"], "content_type": message.get_content_type(),
                    "header_names": list(message.keys()), "parts": parts, "defects": defects,
                    "raw": base64.b64encode(raw).decode(),
                }
                path = f"{folder}/message-{Handler.count}.json"
                with open(path + ".tmp", "w") as f:
                    json.dump(summary, f)
                os.rename(path + ".tmp", path)
                return "250 2.0.0 Message accepted for delivery"

        async def main():
            handler = Handler()
            excluded = [m for m in ("PLAIN", "LOGIN") if m not in mechanisms]
            server = await asyncio.get_running_loop().create_server(
                lambda: SMTP(handler, hostname="aiosmtpd.test", tls_context=context, require_starttls=True,
                             auth_require_tls=True, authenticator=authenticator, auth_exclude_mechanism=excluded),
                host="127.0.0.1", port=0)
            print("PORT", server.sockets[0].getsockname()[1], flush=True)
            await asyncio.Event().wait()

        asyncio.run(main())
        """#
}

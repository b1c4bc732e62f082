import OpenSSLCrypto
import WireFormat

/// Standard Webhooks' signature (docs/guides/connecting-your-backend.md): `v1,` + base64 of HMAC-SHA256, keyed with the
/// secret's decoded bytes (not the `whsec_` text), over `{webhook-id}.{webhook-timestamp}.{body}`.
package enum WebhookSignature {
    package static func sign(id: String, timestamp: Int64, body: [UInt8], secret: [UInt8]) -> String {
        var message = Array("\(id).\(timestamp).".utf8)
        message.append(contentsOf: body)
        return "v1," + Base64.standard.encode(HMACSHA256.mac(key: secret, message: message))
    }
}

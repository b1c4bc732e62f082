#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/sha.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

// OPENSSL_free is a macro that adds the file and line.
static inline void siwa_openssl_free(void *pointer) {
    OPENSSL_free(pointer);
}

// SSL_set_tlsext_host_name is a macro over SSL_ctrl; it sets SNI.
static inline int siwa_ssl_set_sni(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

// BIO_get_mem_data is a macro over BIO_ctrl.
static inline long siwa_bio_get_mem_data(BIO *bio, char **data) {
    return BIO_get_mem_data(bio, data);
}

// EVP_PKEY_PUBLIC_KEY is a compound selection macro.
static inline int siwa_evp_pkey_public_key_selection(void) {
    return EVP_PKEY_PUBLIC_KEY;
}
#include <openssl/hmac.h>

// SSL_CTX_set_min_proto_version is a macro over SSL_CTX_ctrl.
static inline int siwa_ssl_ctx_set_min_proto_version(SSL_CTX *context, int version) {
    return (int)SSL_CTX_set_min_proto_version(context, version);
}

// SSL_CTX_add0_chain_cert is a macro over SSL_CTX_ctrl; the context takes the certificate.
static inline int siwa_ssl_ctx_add0_chain_cert(SSL_CTX *context, X509 *certificate) {
    return (int)SSL_CTX_add0_chain_cert(context, certificate);
}

// SSL_OP_* values are built with a uint64_t cast that Swift does not import.
static inline uint64_t siwa_ssl_op_ignore_unexpected_eof(void) {
    return SSL_OP_IGNORE_UNEXPECTED_EOF;
}

// Likewise (SSL_OP_BIT).
static inline uint64_t siwa_ssl_op_no_renegotiation(void) {
    return SSL_OP_NO_RENEGOTIATION;
}

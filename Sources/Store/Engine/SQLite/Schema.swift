import SQLite

/// The product's schema, as an ordered list of migrations. Append new versions; never edit a
/// shipped one (the migrator refuses a database whose recorded names differ).
public enum Schema {
    public static let migrations: [Migration] = [
        // Small server-wide state that must survive restarts, e.g. the last good copy of
        // Apple's JWKS so identity tokens still verify while Apple's key endpoint is down.
        // WITHOUT ROWID: few rows, always looked up by key, so the key is the storage order.
        Migration(
            version: 1,
            name: "server_state",
            sql: """
                CREATE TABLE server_state(
                    key TEXT PRIMARY KEY,
                    value BLOB NOT NULL,
                    updated_at TEXT NOT NULL
                ) WITHOUT ROWID;
                """
        ),
        // Users, sessions and everything sign-in, notifications and account deletion keep.
        // Times are Unix seconds (UTC); the API renders them as RFC 3339.
        Migration(
            version: 2,
            name: "accounts",
            sql: """
                CREATE TABLE users(
                    id TEXT PRIMARY KEY,
                    apple_sub TEXT NOT NULL UNIQUE,
                    email TEXT,
                    email_verified INTEGER NOT NULL DEFAULT 0,
                    is_private_email INTEGER NOT NULL DEFAULT 0,
                    email_forwarding TEXT CHECK (email_forwarding IN ('enabled', 'disabled')),
                    real_user_status TEXT NOT NULL DEFAULT 'unsupported'
                        CHECK (real_user_status IN ('unsupported', 'unknown', 'likely_real')),
                    given_name TEXT,
                    family_name TEXT,
                    apple_credential TEXT NOT NULL DEFAULT 'authorized'
                        CHECK (apple_credential IN ('authorized', 'revoked')),
                    created_at INTEGER NOT NULL,
                    updated_at INTEGER NOT NULL
                );
                -- Only the SHA-256 of a session token is stored (SPEC §4).
                CREATE TABLE sessions(
                    id TEXT PRIMARY KEY,
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    token_hash BLOB NOT NULL UNIQUE,
                    device_name TEXT,
                    created_at INTEGER NOT NULL,
                    last_seen_at INTEGER NOT NULL,
                    expires_at INTEGER NOT NULL
                );
                CREATE INDEX sessions_by_user ON sessions(user_id);
                -- Apple's refresh and access tokens, AES-256-GCM sealed with the row's user id as
                -- associated data, for the client id they were issued to.
                CREATE TABLE apple_tokens(
                    user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
                    client_id TEXT NOT NULL,
                    refresh_token BLOB,
                    access_token BLOB,
                    updated_at INTEGER NOT NULL,
                    validated_at INTEGER
                );
                -- Name and email that came with a verified token whose sign-in then failed
                -- (Apple sends them once): adopted by the next successful sign-in, for 24 h.
                CREATE TABLE pending_profiles(
                    apple_sub TEXT PRIMARY KEY,
                    given_name TEXT,
                    family_name TEXT,
                    email TEXT,
                    expires_at INTEGER NOT NULL
                ) WITHOUT ROWID;
                -- Replay protection: identity tokens that made a session, until they expire.
                CREATE TABLE used_identity_tokens(
                    token_hash BLOB PRIMARY KEY,
                    expires_at INTEGER NOT NULL
                ) WITHOUT ROWID;
                CREATE TABLE issued_nonces(
                    nonce_hash BLOB PRIMARY KEY,
                    expires_at INTEGER NOT NULL,
                    used_at INTEGER
                ) WITHOUT ROWID;
                -- Server-to-server notifications applied, by jti: a redelivery changes nothing.
                CREATE TABLE notifications(
                    jti TEXT PRIMARY KEY,
                    received_at INTEGER NOT NULL,
                    status TEXT NOT NULL
                ) WITHOUT ROWID;
                -- The durable revocation queue: a row lives until Apple accepts the revocation.
                CREATE TABLE revocations(
                    id INTEGER PRIMARY KEY,
                    user_id TEXT,
                    client_id TEXT NOT NULL,
                    token BLOB NOT NULL,
                    token_kind TEXT NOT NULL CHECK (token_kind IN ('refresh_token', 'access_token')),
                    attempts INTEGER NOT NULL DEFAULT 0,
                    next_attempt_at INTEGER NOT NULL,
                    created_at INTEGER NOT NULL,
                    last_error TEXT
                );
                CREATE INDEX revocations_due ON revocations(next_attempt_at);
                """
        ),
        // When each stored refresh token is next re-validated with Apple (docs/reference/http-api.md). NULL until
        // the validator schedules it; the partial index holds only rows with a refresh token,
        // so both "unscheduled" and "due" are index lookups.
        Migration(
            version: 3,
            name: "refresh_validation",
            sql: """
                ALTER TABLE apple_tokens ADD COLUMN validation_due_at INTEGER;
                CREATE INDEX apple_tokens_validation_due ON apple_tokens(validation_due_at) WHERE refresh_token IS NOT NULL;
                """
        ),
        // The web flow's pending authorizations (docs/reference/http-api.md "Web flow"): one row per redirect to
        // Apple, used up by its callback. Only hashes of the state and of the browser's binding
        // cookie are kept; the nonce is the one the id_token must carry.
        Migration(
            version: 4,
            name: "web_sign_ins",
            sql: """
                CREATE TABLE web_sign_ins(
                    state_hash BLOB PRIMARY KEY,
                    binding_hash BLOB NOT NULL,
                    nonce TEXT NOT NULL,
                    return_to TEXT NOT NULL,
                    expires_at INTEGER NOT NULL
                ) WITHOUT ROWID;
                """
        ),
        // PostgreSQL's instances learn of changed sessions and users from triggers (see
        // `PostgresSchema`); SQLite's one process watches its own writes, so nothing here. The
        // version keeps both engines' histories in step.
        Migration(
            version: 5,
            name: "cache_notifications",
            sql: "-- PostgreSQL only"
        ),
        // docs/guides/connecting-your-backend.md: the team's own id for a user; the webhook outbox, written in the same
        // transaction as the change it reports and ordered per user by `seq`; the access-token
        // signing keys (private halves sealed with `data_key`); the one-time codes that return
        // a web sign-in to an app, bound to the app's PKCE challenge.
        Migration(
            version: 6,
            name: "integration",
            sql: """
                ALTER TABLE users ADD COLUMN external_id TEXT;
                CREATE UNIQUE INDEX users_external_id ON users(external_id) WHERE external_id IS NOT NULL;
                CREATE TABLE webhook_events(
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    id TEXT NOT NULL UNIQUE,
                    user_id TEXT NOT NULL,
                    type TEXT NOT NULL,
                    body TEXT NOT NULL,
                    created_at INTEGER NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    next_attempt_at INTEGER NOT NULL,
                    last_error TEXT,
                    failed_at INTEGER
                );
                CREATE INDEX webhook_events_by_user ON webhook_events(user_id, seq) WHERE failed_at IS NULL;
                CREATE INDEX webhook_events_due ON webhook_events(next_attempt_at) WHERE failed_at IS NULL;
                CREATE TABLE signing_keys(
                    kid TEXT PRIMARY KEY,
                    private_key BLOB NOT NULL,
                    public_jwk TEXT NOT NULL,
                    created_at INTEGER NOT NULL,
                    retired_at INTEGER
                ) WITHOUT ROWID;
                CREATE TABLE app_return_codes(
                    code_hash BLOB PRIMARY KEY,
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    code_challenge TEXT NOT NULL,
                    created INTEGER NOT NULL,
                    expires_at INTEGER NOT NULL
                ) WITHOUT ROWID;
                ALTER TABLE web_sign_ins ADD COLUMN code_challenge TEXT;
                """
        ),
        // docs/guides/team-transfer.md: each user's way through a team transfer, so `transfer export` and
        // `transfer import` resume where they stopped. The sender records the `transfer_sub`
        // Apple gave for `target_team`; the receiver (on its copy of the database) records the
        // CSV's, then `imported_at` once the user has moved to the new `sub`. `last_error` is
        // Apple's (or our) reason the latest attempt failed; `attempts` counts the failures of
        // the current step. The import window's start is kept in `server_state`.
        Migration(
            version: 7,
            name: "team_transfer",
            sql: """
                CREATE TABLE team_transfers(
                    user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
                    target_team TEXT NOT NULL,
                    transfer_sub TEXT,
                    exported_at INTEGER,
                    imported_at INTEGER,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    last_error TEXT,
                    updated_at INTEGER NOT NULL
                ) WITHOUT ROWID;
                CREATE UNIQUE INDEX team_transfers_by_transfer_sub ON team_transfers(transfer_sub) WHERE transfer_sub IS NOT NULL;
                """
        ),
        // docs/guides/passwords-and-email.md: password accounts, the upgrade to Sign in with Apple, and linking.
        //
        // Users may have no Apple ID, so `users.apple_sub` loses its NOT NULL. SQLite cannot
        // drop a NOT NULL in place, and rebuilding `users` is worse here: with foreign keys on
        // (they cannot be turned off inside the migration's transaction) dropping the old table
        // deletes every session, Apple token and app return code with it (ON DELETE CASCADE).
        // So the table's stored definition is edited, as SQLite documents for removing a NOT NULL
        // constraint ("Making Other Kinds Of Table Schema Changes", lang_altertable.html): no
        // row moves, and every column, index and reference (whatever earlier versions added)
        // stays as it is. `RESET` makes this connection read the new definition; the CREATE
        // TABLEs after it change the schema cookie, so every other connection does too. The
        // insert proves the edit took, or fails the migration (rolled back whole).
        //
        // Then: a user's password credential (the email it signs in with, trimmed with ASCII
        // letters lower-cased, unique; the PHC scrypt hash); reset codes (only their SHA-256,
        // 30 minutes, single use; gone with the credential); failed-attempt counters per email
        // and per client address, in the database so several instances share one limit (keys
        // are SHA-256 of what they count, so the table holds no email); an index for "is this
        // the verified email of an Apple user" (sign-up's account_exists); and the web flow's
        // link to the signed-in session when "Add Sign in with Apple" started it.
        Migration(
            version: 8,
            name: "password_accounts",
            sql: """
                PRAGMA writable_schema=ON;
                UPDATE sqlite_schema SET sql = replace(sql, 'apple_sub TEXT NOT NULL UNIQUE', 'apple_sub TEXT UNIQUE')
                    WHERE type = 'table' AND name = 'users';
                PRAGMA writable_schema=RESET;
                CREATE TABLE password_credentials(
                    user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
                    email TEXT NOT NULL UNIQUE,
                    hash TEXT NOT NULL,
                    created_at INTEGER NOT NULL,
                    updated_at INTEGER NOT NULL
                );
                CREATE TABLE password_reset_codes(
                    code_hash BLOB PRIMARY KEY,
                    user_id TEXT NOT NULL REFERENCES password_credentials(user_id) ON DELETE CASCADE,
                    created_at INTEGER NOT NULL,
                    expires_at INTEGER NOT NULL
                ) WITHOUT ROWID;
                CREATE INDEX password_reset_codes_by_user ON password_reset_codes(user_id);
                CREATE TABLE password_attempts(
                    key BLOB PRIMARY KEY,
                    failures INTEGER NOT NULL,
                    window_ends_at INTEGER NOT NULL
                ) WITHOUT ROWID;
                CREATE INDEX users_verified_email ON users(lower(email)) WHERE email_verified = 1 AND is_private_email = 0;
                ALTER TABLE web_sign_ins ADD COLUMN link_session_id TEXT;
                INSERT INTO users(id, apple_sub, created_at, updated_at) VALUES ('usr_migration_8_check', NULL, 0, 0);
                DELETE FROM users WHERE id = 'usr_migration_8_check';
                """
        ),
        // The admin API's and `users list`'s email filter: the users with that exact email, in
        // id order, an index range whatever the page.
        Migration(
            version: 9,
            name: "users_by_email",
            sql: "CREATE INDEX users_email ON users(email, id);"
        ),
        // PostgreSQL's version 10 stops announcing last_seen_at changes to the instances'
        // caches. SQLite's cache watches rows in this process and has nothing to change; the
        // version is kept so both engines count alike.
        Migration(version: 10, name: "cache_notifications_without_last_seen", sql: ""),
        // PostgreSQL's version 11 lets a write that announced no change skip its cache marker;
        // nothing to change here either.
        Migration(version: 11, name: "cache_notifications_flag_the_transaction", sql: ""),
        // docs/guides/passwords-and-email.md: proving a password's email. Until this version nothing proved one, so
        // every existing password is unverified (the column's default says so). A code that
        // proves an email (only its SHA-256, 24 hours, single use; gone with the credential); and
        // per email address and kind of code, how many codes went out in the current hour (keys
        // are SHA-256 of what they count, so the table holds no email).
        Migration(
            version: 12,
            name: "email_verification",
            sql: """
                ALTER TABLE password_credentials ADD COLUMN email_verified INTEGER NOT NULL DEFAULT 0;
                CREATE TABLE email_verification_codes(
                    code_hash BLOB PRIMARY KEY,
                    user_id TEXT NOT NULL REFERENCES password_credentials(user_id) ON DELETE CASCADE,
                    created_at INTEGER NOT NULL,
                    expires_at INTEGER NOT NULL
                ) WITHOUT ROWID;
                CREATE INDEX email_verification_codes_by_user ON email_verification_codes(user_id);
                CREATE TABLE email_code_sends(
                    key BLOB PRIMARY KEY,
                    sent INTEGER NOT NULL,
                    window_ends_at INTEGER NOT NULL
                ) WITHOUT ROWID;
                -- A password an Apple user set on the email Apple proved (verified, not a relay,
                -- still the account's email) was proven by Apple: left unverified, a reset would
                -- unbind the owner's own Apple ID.
                UPDATE password_credentials SET email_verified = 1
                WHERE user_id IN (
                    SELECT u.id FROM users u
                    WHERE u.id = password_credentials.user_id AND u.apple_sub IS NOT NULL
                      AND u.email_verified = 1 AND u.is_private_email = 0
                      AND lower(u.email) = password_credentials.email
                );
                """
        ),
        // docs/guides/passwords-and-email.md: mail. Each user's language for the mail written to them; the mail outbox,
        // written in the same transaction as the change that causes a message, with the
        // delivery columns of `webhook_events` (the queue machinery is shared) but no order per
        // user. `body` holds the template's values (sealed with `data_key` when they hold a
        // code); `message_id` is chosen at enqueue so that every retry is the same message.
        // `user_id` is kept as text, not a reference: `account_deleted` outlives its user.
        Migration(
            version: 13,
            name: "mail_outbox",
            sql: """
                ALTER TABLE users ADD COLUMN locale TEXT NOT NULL DEFAULT 'en' CHECK (locale IN ('en', 'ko'));
                CREATE TABLE mail_messages(
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    id TEXT NOT NULL UNIQUE,
                    user_id TEXT,
                    kind TEXT NOT NULL,
                    recipient TEXT NOT NULL,
                    language TEXT NOT NULL,
                    message_id TEXT NOT NULL,
                    body TEXT NOT NULL,
                    created_at INTEGER NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    next_attempt_at INTEGER NOT NULL,
                    last_error TEXT,
                    failed_at INTEGER
                );
                CREATE INDEX mail_messages_due ON mail_messages(next_attempt_at) WHERE failed_at IS NULL;
                """
        ),
        // The audit trail (docs/reference/http-api.md, "Activity"): one row per event, written in
        // the transaction of the change it records. `seq` orders events of the same second;
        // pages are keyset on (at, seq), by user, by type, or by time alone. `user_id` is text,
        // not a reference: a deleted user's events outlive them until `audit_retention`.
        // Sessions learn where they came from: the sign-in method, client address and user
        // agent of the request that made them (null for sessions made before this version).
        // `seq` is the rowid without AUTOINCREMENT: every sign-in writes events, and
        // AUTOINCREMENT would update sqlite_sequence with each; retention deletes the oldest
        // rows only, so the next rowid still follows the newest.
        Migration(
            version: 14,
            name: "audit_events",
            sql: """
                CREATE TABLE events(
                    seq INTEGER PRIMARY KEY,
                    id TEXT NOT NULL,
                    at INTEGER NOT NULL,
                    type TEXT NOT NULL,
                    user_id TEXT,
                    session_id TEXT,
                    actor TEXT NOT NULL,
                    ip TEXT,
                    user_agent TEXT,
                    detail TEXT NOT NULL
                );
                CREATE INDEX events_by_user ON events(user_id, at, seq);
                CREATE INDEX events_by_type ON events(type, at, seq);
                CREATE INDEX events_by_time ON events(at, seq);
                ALTER TABLE sessions ADD COLUMN method TEXT;
                ALTER TABLE sessions ADD COLUMN ip TEXT;
                ALTER TABLE sessions ADD COLUMN user_agent TEXT;
                """
        ),
        // The operators' console sessions (docs/guides/operating.md "Console"): only the SHA-256 of a
        // cookie is stored.
        Migration(
            version: 15,
            name: "console_sessions",
            sql: """
                CREATE TABLE console_sessions(
                    token_hash BLOB PRIMARY KEY,
                    created_at INTEGER NOT NULL,
                    expires_at INTEGER NOT NULL
                );
                """
        ),
    ]

    /// The newest version this build knows.
    public static var version: Int { migrations.map(\.version).max() ?? 0 }
}

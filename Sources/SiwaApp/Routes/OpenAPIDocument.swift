/// `GET /openapi.json`: the OpenAPI 3.1 description of the HTTP API (docs/reference/http-api.md). Written out
/// as the contract it is; `OpenAPITests` keeps it valid JSON and in step with the router (every
/// route described, every described route served).
enum OpenAPIDocument {
    static let json = #"""
    {
      "openapi": "3.1.0",
      "info": {
        "title": "siwa-server",
        "version": "1.0.0",
        "summary": "The server side of Sign in with Apple: identity tokens, sessions, Apple's notifications and the web flow.",
        "description": "Browsers on the origins of the cors_origins setting may call /api/* and /auth/verify (CORS). For such an Origin, a preflight OPTIONS to those paths is answered 204 with Access-Control-Allow-Origin (that origin), Access-Control-Allow-Credentials: true, Access-Control-Allow-Methods: GET, POST, PUT, PATCH, DELETE, Access-Control-Allow-Headers: Authorization, Content-Type, X-Request-Id, Access-Control-Max-Age: 600 and Vary: Origin; every other response carries Access-Control-Allow-Origin, Access-Control-Allow-Credentials: true, Access-Control-Expose-Headers: X-Request-Id, Retry-After and Vary: Origin. Any other Origin gets no Access-Control-* header.",
        "license": {"name": "Proprietary", "identifier": "LicenseRef-Proprietary"}
      },
      "tags": [
        {"name": "operations", "description": "Health, readiness, metrics and this document."},
        {"name": "sign-in", "description": "Native sign-in (mobile clients, and Sign in with Apple JS popup mode)."},
        {"name": "account", "description": "The signed-in user, their sessions and account deletion."},
        {"name": "passwords", "description": "Email and password accounts, the upgrade to Sign in with Apple, and linking."},
        {"name": "apple", "description": "Called by Apple: server-to-server notifications."},
        {"name": "web", "description": "The web flow and pages: redirect to Apple, Apple's form_post callback, the account page and its forms."},
        {"name": "integration", "description": "For the team's other services: forward authentication, access tokens and their keys."},
        {"name": "admin", "description": "The team's operators: find users, their sessions, their external_id; delete them or end their sessions. Served only when admin_token is set (otherwise every /admin path is 404)."}
      ],
      "paths": {
        "/healthz": {
          "get": {
            "tags": ["operations"], "operationId": "health", "summary": "200 while the process serves.",
            "responses": {"200": {"description": "Serving.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Health"}}}}}
          }
        },
        "/readyz": {
          "get": {
            "tags": ["operations"], "operationId": "readiness", "summary": "Ready when the database answers and Apple's keys are loaded.",
            "responses": {
              "200": {"description": "Ready.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Ready"}}}},
              "503": {"description": "Not ready; the reasons say why.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/NotReady"}}}}
            }
          }
        },
        "/metrics": {
          "get": {
            "tags": ["operations"], "operationId": "metrics", "summary": "Prometheus text format.",
            "responses": {"200": {"description": "The metrics.", "content": {"text/plain": {"schema": {"type": "string"}}}}}
          }
        },
        "/openapi.json": {
          "get": {
            "tags": ["operations"], "operationId": "openapi", "summary": "This document.",
            "responses": {"200": {"description": "OpenAPI 3.1.", "content": {"application/json": {"schema": {"type": "object"}}}}}
          }
        },
        "/api/auth/apple/nonce": {
          "post": {
            "tags": ["sign-in"], "operationId": "issueNonce",
            "summary": "A server-issued nonce: single use, valid 10 minutes. Optional; clients may make their own.",
            "responses": {
              "201": {"description": "Issued.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Nonce"}}}},
              "429": {"$ref": "#/components/responses/TooManyRequests"},
              "500": {"$ref": "#/components/responses/InternalError"}
            }
          }
        },
        "/api/auth/apple": {
          "post": {
            "tags": ["sign-in"], "operationId": "signIn",
            "summary": "Exchange an identity token (and optionally its authorization code) for a session.",
            "description": "Checks, in order: malformed, unsupported_alg, unknown_key, bad_signature, wrong_issuer, wrong_audience, expired, issued_in_future, nonce_missing / nonce_mismatch, code_mismatch, replayed. The code is sent to Apple at most once. A failed sign-in creates no user and no session.",
            "requestBody": {
              "required": true,
              "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SignInRequest"}}}
            },
            "responses": {
              "200": {"description": "Signed in.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SignInResponse"}}}},
              "400": {"description": "`invalid_request`: the body is not JSON or a field is missing or of the wrong type.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
              "401": {"description": "`invalid_token` (error_description is the reason code) or `invalid_grant` (Apple refused the code).", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
              "409": {"description": "`account_exists`: the token's verified, non-relay email belongs to a password account and its Apple ID is not yet known; sign in with the password and upgrade or link. Nothing was created.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
              "413": {"$ref": "#/components/responses/PayloadTooLarge"},
              "429": {"$ref": "#/components/responses/TooManyRequests"},
              "500": {"$ref": "#/components/responses/InternalError"},
              "502": {"description": "`apple_unavailable`: Apple unreachable, timed out or failing.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
              "503": {"description": "`keys_unavailable`: Apple's signing keys are not loaded (fresh or persisted); `database_unavailable`: the database cannot be reached (Apple's new tokens, if the code was exchanged, are revoked). Nothing was created.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
            }
          }
        },
        "/api/auth/exchange": {
          "post": {
            "tags": ["integration"], "operationId": "exchangeAppCode",
            "summary": "An app trades the one-time code of a web sign-in that returned to it, and its PKCE verifier, for a session.",
            "description": "The code (60 s, single use) is used up by the attempt whatever its outcome.",
            "requestBody": {
              "required": true,
              "content": {"application/json": {"schema": {
                "type": "object", "required": ["code", "code_verifier"],
                "properties": {
                  "code": {"type": "string", "minLength": 1},
                  "code_verifier": {"type": "string", "description": "RFC 7636: 43 to 128 unreserved characters."},
                  "device_name": {"type": ["string", "null"]}
                }
              }}}
            },
            "responses": {
              "200": {"description": "Signed in.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SignInResponse"}}}},
              "400": {"description": "`invalid_request` (the body is not JSON or a field is missing) or `invalid_grant` (the code is unknown, used or expired, or the verifier does not match).", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
              "413": {"$ref": "#/components/responses/PayloadTooLarge"},
              "429": {"$ref": "#/components/responses/TooManyRequests"}
            }
          }
        },
        "/api/auth/password/sign-up": {
          "post": {
            "tags": ["passwords"], "operationId": "passwordSignUp",
            "summary": "Creates an account with an email and password (no Apple ID) and its first session.",
            "description": "The password must be 10 to 256 bytes of UTF-8, not one of the 10,000 most common passwords, and not contain the email's local part. The email is trimmed and compared case-insensitively; it is stored unverified.",
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PasswordSignUpRequest"}}}},
            "responses": {
              "201": {"description": "Created; sign_in_methods is [\"password\"].", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SignInResponse"}}}},
              "400": {"description": "`invalid_request` (not JSON, a field missing or not an email) or `weak_password`.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
              "409": {"description": "`account_exists`: the email belongs to a user already (by password, or as an Apple user's verified, non-relay email).", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
              "413": {"$ref": "#/components/responses/PayloadTooLarge"},
              "429": {"$ref": "#/components/responses/TooManyRequests"},
              "503": {"$ref": "#/components/responses/Busy"}
            }
          }
        },
        "/api/auth/password": {
          "post": {
            "tags": ["passwords"], "operationId": "passwordSignIn",
            "summary": "Signs in with an email and password.",
            "description": "A wrong email and a wrong password are answered alike, in body and time (an unknown email still costs one hash). After 5 failures for one email within 15 minutes, or 20 from one client address, attempts are refused until the window passes; a success resets the email's count.",
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PasswordSignInRequest"}}}},
            "responses": {
              "200": {"description": "Signed in (created is false).", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SignInResponse"}}}},
              "400": {"$ref": "#/components/responses/InvalidRequest"},
              "401": {"$ref": "#/components/responses/InvalidCredentials"},
              "413": {"$ref": "#/components/responses/PayloadTooLarge"},
              "429": {"$ref": "#/components/responses/TooManyAttempts"},
              "503": {"$ref": "#/components/responses/Busy"}
            }
          }
        },
        "/api/auth/password/reset-request": {
          "post": {
            "tags": ["passwords"], "operationId": "passwordResetRequest",
            "summary": "Asks for a reset code: for a user with a password, a user.password_reset_requested webhook carries it (128 bits, base64url, 30 minutes, single use).",
            "requestBody": {"required": true, "content": {"application/json": {"schema": {
              "type": "object", "required": ["email"], "properties": {"email": {"type": "string", "minLength": 1}}
            }}}},
            "responses": {
              "202": {"description": "Accepted, at once and alike whether or not the email has a password: the email is looked up after the answer (a database outage then costs the code, not the answer).", "content": {"application/json": {"schema": {"type": "object", "required": ["status"], "properties": {"status": {"const": "accepted"}}}}}},
              "400": {"$ref": "#/components/responses/InvalidRequest"},
              "413": {"$ref": "#/components/responses/PayloadTooLarge"},
              "429": {"$ref": "#/components/responses/TooManyRequests"},
              "503": {"description": "`not_configured`: neither smtp_url nor webhook_url is set, so no code could be delivered.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
            }
          }
        },
        "/api/auth/email/verify": {
          "post": {
            "tags": ["passwords"], "operationId": "verifyEmail",
            "summary": "Proves a password's email with the code a user.email_verification_requested webhook carried (no session needed: the code is the proof).",
            "description": "Password sign-up sends a code (128 bits, base64url, 24 hours, single use). Once verified, the email refuses a Sign in with Apple that carries it (account_exists), may carry a linked Apple ID and a first password, and every other user holding it unverified with a password and no Apple ID is deleted (user.deleted, reason email_claimed).",
            "requestBody": {"required": true, "content": {"application/json": {"schema": {
              "type": "object", "required": ["code"], "properties": {"code": {"type": "string", "minLength": 1}}
            }}}},
            "responses": {
              "200": {"description": "The user, with email_verified true.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/User"}}}},
              "400": {"description": "`invalid_request`, or `invalid_grant`: the code is wrong, used or expired.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
              "413": {"$ref": "#/components/responses/PayloadTooLarge"},
              "429": {"$ref": "#/components/responses/TooManyRequests"}
            }
          }
        },
        "/api/account/email/verify-request": {
          "post": {
            "tags": ["passwords"], "operationId": "verifyEmailRequest",
            "summary": "Asks for a new verification code for the signed-in user's unverified password email (nothing is sent when it is verified; at most 3 codes per address per hour).",
            "security": [{"bearer": []}, {"sessionCookie": []}],
            "responses": {
              "202": {"description": "Accepted.", "content": {"application/json": {"schema": {"type": "object", "required": ["status"], "properties": {"status": {"const": "accepted"}}}}}},
              "401": {"$ref": "#/components/responses/Unauthenticated"},
              "503": {"description": "`not_configured`: neither smtp_url nor webhook_url is set, so no code could be delivered.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
            }
          }
        },
        "/api/auth/password/reset": {
          "post": {
            "tags": ["passwords"], "operationId": "passwordReset",
            "summary": "Sets a new password with a reset code; every session of the user ends.",
            "requestBody": {"required": true, "content": {"application/json": {"schema": {
              "type": "object", "required": ["code", "new_password"],
              "properties": {"code": {"type": "string", "minLength": 1}, "new_password": {"type": "string", "minLength": 1}}
            }}}},
            "responses": {
              "204": {"description": "The password is set."},
              "400": {"description": "`invalid_request`, `weak_password` (the code is not used up), or `invalid_grant` (the code is wrong, used or expired).", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
              "413": {"$ref": "#/components/responses/PayloadTooLarge"},
              "429": {"$ref": "#/components/responses/TooManyRequests"},
              "503": {"$ref": "#/components/responses/Busy"}
            }
          }
        },
        "/api/auth/apple/upgrade": {
          "post": {
            "tags": ["passwords"], "operationId": "upgradeToApple",
            "summary": "The upgrade: the password and the identity token are checked, then in one transaction the Apple ID is bound, the password removed and a session made.",
            "description": "The password is checked as by POST /api/auth/password (attempt limits included), the identity token exactly as by POST /api/auth/apple (its code exchanged). Nothing changes on any failure.",
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/UpgradeRequest"}}}},
            "responses": {
              "200": {"description": "Upgraded; sign_in_methods is [\"apple\"] (created is false).", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SignInResponse"}}}},
              "400": {"$ref": "#/components/responses/InvalidRequest"},
              "401": {"description": "`invalid_credentials`, `invalid_token` (error_description is the reason code) or `invalid_grant` (Apple refused the code).", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
              "409": {"description": "`apple_id_in_use`: the Apple ID belongs to another user; or `conflict`: this account has another Apple ID.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
              "413": {"$ref": "#/components/responses/PayloadTooLarge"},
              "429": {"$ref": "#/components/responses/TooManyAttempts"},
              "502": {"description": "`apple_unavailable`.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
              "503": {"description": "`busy` or `keys_unavailable`.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
            }
          }
        },
        "/api/account/password": {
          "put": {
            "tags": ["passwords"], "operationId": "setPassword",
            "summary": "Changes the password (current_password must match), or sets a first one on the account's email (needs a session made in the last 10 minutes). Every other session ends.",
            "security": [{"bearer": []}, {"sessionCookie": []}],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {
              "type": "object", "required": ["new_password"],
              "properties": {"current_password": {"type": ["string", "null"]}, "new_password": {"type": "string", "minLength": 1}}
            }}}},
            "responses": {
              "204": {"description": "Set."},
              "400": {"description": "`invalid_request` (also: the account has no email) or `weak_password`.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
              "401": {"description": "`unauthenticated`, or `invalid_credentials`: current_password is missing or wrong.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
              "403": {"description": "`reauthentication_required` (a first password needs a recent sign-in), `email_unverified` (a first password needs an email Apple verified) or `forbidden`.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
              "409": {"description": "`account_exists`: another account uses the email.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
              "413": {"$ref": "#/components/responses/PayloadTooLarge"},
              "429": {"$ref": "#/components/responses/TooManyAttempts"},
              "503": {"$ref": "#/components/responses/Busy"}
            }
          },
          "delete": {
            "tags": ["passwords"], "operationId": "removePassword",
            "summary": "Removes the password; refused when it is the account's only way in.",
            "security": [{"bearer": []}, {"sessionCookie": []}],
            "responses": {
              "200": {"description": "The user.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/User"}}}},
              "401": {"$ref": "#/components/responses/Unauthenticated"},
              "403": {"$ref": "#/components/responses/Forbidden"},
              "409": {"$ref": "#/components/responses/LastSignInMethod"}
            }
          }
        },
        "/api/account/apple": {
          "post": {
            "tags": ["passwords"], "operationId": "linkApple",
            "summary": "Links an Apple ID to the signed-in user (needs a session made in the last 10 minutes).",
            "description": "The identity token is checked exactly as by POST /api/auth/apple, its code exchanged.",
            "security": [{"bearer": []}, {"sessionCookie": []}],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {
              "type": "object", "required": ["identity_token"],
              "properties": {
                "identity_token": {"type": "string", "minLength": 1},
                "authorization_code": {"type": ["string", "null"]},
                "nonce": {"type": ["string", "null"]}
              }
            }}}},
            "responses": {
              "200": {"description": "The user, with apple in sign_in_methods.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/User"}}}},
              "400": {"$ref": "#/components/responses/InvalidRequest"},
              "401": {"description": "`unauthenticated`, `invalid_token` or `invalid_grant`.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
              "403": {"description": "`reauthentication_required`, `forbidden`, or `email_unverified`: the user has a password whose email is not verified yet.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
              "409": {"description": "`apple_id_in_use`: the Apple ID belongs to another user; or `conflict`: this account has another Apple ID.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
              "413": {"$ref": "#/components/responses/PayloadTooLarge"},
              "502": {"description": "`apple_unavailable`.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
              "503": {"description": "`keys_unavailable`.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
            }
          },
          "delete": {
            "tags": ["passwords"], "operationId": "unlinkApple",
            "summary": "Unlinks the Apple ID; its tokens are revoked at Apple through the durable revocation queue. Refused when it is the account's only way in.",
            "security": [{"bearer": []}, {"sessionCookie": []}],
            "responses": {
              "200": {"description": "The user.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/User"}}}},
              "401": {"$ref": "#/components/responses/Unauthenticated"},
              "403": {"$ref": "#/components/responses/Forbidden"},
              "409": {"$ref": "#/components/responses/LastSignInMethod"}
            }
          }
        },
        "/api/me": {
          "get": {
            "tags": ["account"], "operationId": "me", "summary": "The signed-in user.",
            "security": [{"bearer": []}, {"sessionCookie": []}],
            "responses": {
              "200": {"description": "The user.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/User"}}}},
              "401": {"$ref": "#/components/responses/Unauthenticated"}
            }
          }
        },
        "/auth/verify": {
          "get": {
            "tags": ["integration"], "operationId": "verifySession",
            "summary": "Forward authentication: 204 with the session's user in X-Siwa-* headers, else 401. HEAD works too.",
            "security": [{"bearer": []}, {"sessionCookie": []}],
            "responses": {
              "204": {
                "description": "A live session; it counts as use of it.",
                "headers": {
                  "X-Siwa-User-Id": {"schema": {"type": "string"}},
                  "X-Siwa-Session-Id": {"schema": {"type": "string"}},
                  "X-Siwa-Apple-Sub": {"description": "Omitted for a user without an Apple ID.", "schema": {"type": "string"}},
                  "X-Siwa-External-Id": {"description": "When set.", "schema": {"type": "string"}},
                  "Cache-Control": {"schema": {"const": "no-store"}}
                }
              },
              "401": {"$ref": "#/components/responses/Unauthenticated"}
            }
          }
        },
        "/api/logout": {
          "post": {
            "tags": ["account"], "operationId": "logout", "summary": "Ends the session of this request.",
            "security": [{"bearer": []}, {"sessionCookie": []}],
            "responses": {
              "204": {"description": "Ended."},
              "401": {"$ref": "#/components/responses/Unauthenticated"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          }
        },
        "/api/sessions": {
          "get": {
            "tags": ["account"], "operationId": "listSessions", "summary": "The user's live sessions, newest first, each with the method, ip and user_agent of the sign-in that made it.",
            "security": [{"bearer": []}, {"sessionCookie": []}],
            "responses": {
              "200": {"description": "The sessions.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SessionList"}}}},
              "401": {"$ref": "#/components/responses/Unauthenticated"}
            }
          }
        },
        "/api/account/activity": {
          "get": {
            "tags": ["account"], "operationId": "accountActivity",
            "summary": "The signed-in user's own audit events, newest first: sign-ins, changes to the account, sessions ended, Apple's notifications, operators' actions.",
            "security": [{"bearer": []}, {"sessionCookie": []}],
            "parameters": [
              {"name": "limit", "in": "query", "description": "Events per page.", "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}},
              {"$ref": "#/components/parameters/EventCursor"}
            ],
            "responses": {
              "200": {"description": "A page.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/EventList"}}}},
              "400": {"$ref": "#/components/responses/InvalidRequest"},
              "401": {"$ref": "#/components/responses/Unauthenticated"}
            }
          }
        },
        "/api/sessions/{id}": {
          "delete": {
            "tags": ["account"], "operationId": "endSession", "summary": "Ends one of the user's own sessions.",
            "security": [{"bearer": []}, {"sessionCookie": []}],
            "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
            "responses": {
              "204": {"description": "Ended."},
              "401": {"$ref": "#/components/responses/Unauthenticated"},
              "403": {"$ref": "#/components/responses/Forbidden"},
              "404": {"description": "`not_found`: no such live session of this user (another user's sessions are never found).", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
            }
          }
        },
        "/api/account": {
          "patch": {
            "tags": ["account"], "operationId": "updateAccount",
            "summary": "Sets the language of the mail written to the user.",
            "security": [{"bearer": []}, {"sessionCookie": []}],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {
              "type": "object", "required": ["locale"], "additionalProperties": false,
              "properties": {"locale": {"enum": ["en", "ko"]}}
            }}}},
            "responses": {
              "200": {"description": "The user, changed.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/User"}}}},
              "400": {"$ref": "#/components/responses/InvalidRequest"},
              "401": {"$ref": "#/components/responses/Unauthenticated"},
              "403": {"$ref": "#/components/responses/Forbidden"},
              "413": {"$ref": "#/components/responses/PayloadTooLarge"}
            }
          },
          "delete": {
            "tags": ["account"], "operationId": "deleteAccount",
            "summary": "Deletes the account: sessions end at once, Apple's tokens are revoked (or queued until Apple accepts).",
            "security": [{"bearer": []}, {"sessionCookie": []}],
            "responses": {
              "202": {"description": "Deleted.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AccountDeleted"}}}},
              "401": {"$ref": "#/components/responses/Unauthenticated"},
              "403": {"$ref": "#/components/responses/Forbidden"},
              "500": {"$ref": "#/components/responses/InternalError"}
            }
          }
        },
        "/api/token": {
          "post": {
            "tags": ["integration"], "operationId": "issueAccessToken",
            "summary": "An access token (RFC 9068 JWT, ES256) saying who the session's user is.",
            "description": "Header `{\"alg\":\"ES256\",\"typ\":\"at+jwt\",\"kid\":…}`; claims `iss` (public_url), `sub` (user id), `aud` (access_token_audience), `iat`, `exp` (iat + access_token_ttl), `jti`, `sid` (session id), and `apple_sub` and `external_id` when the user has them. Verify with the keys of /.well-known/jwks.json. A token lives until `exp` even if the session ends; a session that ended gets no new one.",
            "security": [{"bearer": []}, {"sessionCookie": []}],
            "responses": {
              "200": {
                "description": "Issued.",
                "headers": {"Cache-Control": {"schema": {"const": "no-store"}}},
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AccessToken"}}}
              },
              "401": {"$ref": "#/components/responses/Unauthenticated"},
              "403": {"$ref": "#/components/responses/Forbidden"},
              "500": {"$ref": "#/components/responses/InternalError"}
            }
          }
        },
        "/.well-known/jwks.json": {
          "get": {
            "tags": ["integration"], "operationId": "accessTokenKeys",
            "summary": "The public keys of every access token that may still be valid (the signing key, a newer one published before it signs, and replaced ones for a day).",
            "responses": {
              "200": {
                "description": "The key set.",
                "headers": {"Cache-Control": {"schema": {"const": "public, max-age=300"}}},
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/JSONWebKeySet"}}}
              }
            }
          }
        },
        "/apple/notifications": {
          "post": {
            "tags": ["apple"], "operationId": "appleNotification",
            "summary": "Apple's server-to-server notifications (email-disabled, email-enabled, consent-revoked, account-delete).",
            "description": "Idempotent by the JWS `jti`. 200 only after the effect is committed.",
            "requestBody": {
              "required": true,
              "content": {"application/json": {"schema": {"$ref": "#/components/schemas/NotificationRequest"}}}
            },
            "responses": {
              "200": {"description": "Applied, already applied, or ignored (unknown user or event type).", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/NotificationStatus"}}}},
              "400": {"description": "`invalid_request` (not JSON with a string `payload`) or `invalid_token` (the JWS does not verify; error_description is the reason).", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
              "413": {"$ref": "#/components/responses/PayloadTooLarge"},
              "500": {"$ref": "#/components/responses/InternalError"}
            }
          }
        },
        "/admin/users": {
          "get": {
            "tags": ["admin"], "operationId": "adminListUsers",
            "summary": "Users in id order, a page at a time; every filter given must equal the stored value exactly.",
            "security": [{"adminToken": []}],
            "parameters": [
              {"name": "email", "in": "query", "schema": {"type": "string", "minLength": 1}},
              {"name": "apple_sub", "in": "query", "schema": {"type": "string", "minLength": 1}},
              {"name": "external_id", "in": "query", "schema": {"type": "string", "minLength": 1}},
              {"name": "limit", "in": "query", "description": "Users per page.", "schema": {"type": "integer", "minimum": 1, "maximum": 200, "default": 50}},
              {"name": "cursor", "in": "query", "description": "next_cursor of the previous page, as it was given.", "schema": {"type": "string"}}
            ],
            "responses": {
              "200": {"description": "A page.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/UserList"}}}},
              "400": {"$ref": "#/components/responses/InvalidRequest"},
              "401": {"$ref": "#/components/responses/AdminUnauthenticated"},
              "500": {"$ref": "#/components/responses/InternalError"}
            }
          }
        },
        "/admin/users/{id}": {
          "get": {
            "tags": ["admin"], "operationId": "adminShowUser", "summary": "The user and its sessions that still work, newest first.",
            "security": [{"adminToken": []}],
            "parameters": [{"$ref": "#/components/parameters/UserID"}],
            "responses": {
              "200": {"description": "The user.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/UserWithSessions"}}}},
              "401": {"$ref": "#/components/responses/AdminUnauthenticated"},
              "404": {"$ref": "#/components/responses/UserNotFound"}
            }
          },
          "patch": {
            "tags": ["admin"], "operationId": "adminSetExternalID",
            "summary": "Sets the team's own id for the user (unique), or clears it with null; user.updated when it changed.",
            "security": [{"adminToken": []}],
            "parameters": [{"$ref": "#/components/parameters/UserID"}],
            "requestBody": {
              "required": true,
              "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ExternalIDPatch"}}}
            },
            "responses": {
              "200": {"description": "The user as it now is.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/User"}}}},
              "400": {"$ref": "#/components/responses/InvalidRequest"},
              "401": {"$ref": "#/components/responses/AdminUnauthenticated"},
              "404": {"$ref": "#/components/responses/UserNotFound"},
              "409": {"description": "`conflict`: another user has this external_id; nothing changed.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
              "413": {"$ref": "#/components/responses/PayloadTooLarge"}
            }
          },
          "delete": {
            "tags": ["admin"], "operationId": "adminDeleteUser",
            "summary": "Deletes the user as DELETE /api/account does: sessions end at once, Apple's tokens are revoked (or queued until Apple accepts); user.deleted with reason admin.",
            "security": [{"adminToken": []}],
            "parameters": [{"$ref": "#/components/parameters/UserID"}],
            "responses": {
              "202": {"description": "Deleted.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AccountDeleted"}}}},
              "401": {"$ref": "#/components/responses/AdminUnauthenticated"},
              "404": {"$ref": "#/components/responses/UserNotFound"},
              "500": {"$ref": "#/components/responses/InternalError"}
            }
          }
        },
        "/admin/events": {
          "get": {
            "tags": ["admin"], "operationId": "adminEvents", "summary": "Every user's audit events, newest first, filtered.",
            "security": [{"adminToken": []}],
            "parameters": [
              {"name": "user_id", "in": "query", "description": "Only this user's events.", "schema": {"type": "string"}},
              {"name": "type", "in": "query", "description": "Only types that start with this (sign_in. gives sign_in.succeeded and sign_in.failed).", "schema": {"type": "string"}},
              {"name": "since", "in": "query", "description": "Only events at or after this time.", "schema": {"type": "string", "format": "date-time"}},
              {"name": "until", "in": "query", "description": "Only events before this time.", "schema": {"type": "string", "format": "date-time"}},
              {"name": "limit", "in": "query", "description": "Events per page.", "schema": {"type": "integer", "minimum": 1, "maximum": 200, "default": 50}},
              {"$ref": "#/components/parameters/EventCursor"}
            ],
            "responses": {
              "200": {"description": "A page.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/EventList"}}}},
              "400": {"$ref": "#/components/responses/InvalidRequest"},
              "401": {"$ref": "#/components/responses/AdminUnauthenticated"}
            }
          }
        },
        "/admin/users/{id}/sessions": {
          "delete": {
            "tags": ["admin"], "operationId": "adminEndSessions",
            "summary": "Ends every session of the user, on every instance at once.",
            "security": [{"adminToken": []}],
            "parameters": [{"$ref": "#/components/parameters/UserID"}],
            "responses": {
              "204": {"description": "Ended (also when there were none)."},
              "401": {"$ref": "#/components/responses/AdminUnauthenticated"},
              "404": {"$ref": "#/components/responses/UserNotFound"}
            }
          }
        },
        "/": {
          "get": {
            "tags": ["web"], "operationId": "signInPage", "summary": "The sign-in page with the Sign in with Apple button.",
            "parameters": [
              {"name": "style", "in": "query", "schema": {"enum": ["black", "white", "white-outline"]}},
              {"name": "title", "in": "query", "schema": {"enum": ["sign-in", "continue", "logo"]}},
              {"name": "size", "in": "query", "schema": {"enum": ["small", "medium", "large"]}},
              {"$ref": "#/components/parameters/PageLanguage"}
            ],
            "responses": {
              "200": {"description": "The page.", "content": {"text/html": {"schema": {"type": "string"}}}},
              "303": {"description": "Already signed in: to /account."}
            }
          }
        },
        "/account": {
          "get": {
            "tags": ["web"], "operationId": "accountPage", "summary": "The signed-in user, their sessions, and the forms to sign out, end sessions and delete the account.",
            "security": [{"sessionCookie": []}],
            "parameters": [{"$ref": "#/components/parameters/PageLanguage"}],
            "responses": {
              "200": {"description": "The page.", "content": {"text/html": {"schema": {"type": "string"}}}},
              "303": {"description": "No live session: to /."}
            }
          }
        },
        "/auth/apple/login": {
          "get": {
            "tags": ["web"], "operationId": "webLogin",
            "summary": "Starts the web flow: 302 to Apple's authorize page with a fresh state and nonce, and the siwa_auth binding cookie.",
            "parameters": [
              {"name": "return_to", "in": "query", "description": "A path on this site, a URL of an allowed origin (default /account), or an app URL whose scheme is in allowed_return_schemes.", "schema": {"type": "string"}},
              {"name": "code_challenge", "in": "query", "description": "Required with an app URL: base64url of the SHA-256 of the app's code verifier (RFC 7636).", "schema": {"type": "string"}},
              {"name": "code_challenge_method", "in": "query", "description": "Required with an app URL.", "schema": {"const": "S256"}}
            ],
            "responses": {
              "302": {"description": "To Apple (response_type=code id_token, response_mode=form_post, scope=name email)."},
              "400": {"description": "`invalid_request`: return_to is not allowed, an app return lacks its S256 code_challenge, a code_challenge comes without an app return, or the query is malformed.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
              "429": {"$ref": "#/components/responses/TooManyRequests"},
              "500": {"description": "Sign in is not set up (no web_client_id) or cannot start.", "content": {"text/html": {"schema": {"type": "string"}}}}
            }
          }
        },
        "/auth/apple/callback": {
          "post": {
            "tags": ["web"], "operationId": "webCallback", "summary": "Apple's form_post: signs in and sets the session cookie.",
            "requestBody": {
              "required": true,
              "content": {"application/x-www-form-urlencoded": {"schema": {"$ref": "#/components/schemas/AppleFormPost"}}}
            },
            "responses": {
              "303": {"description": "Signed in: to return_to with the siwa_session cookie, or to an app URL with a one-time code= and no cookie; or error=user_cancelled_authorize: to /?error=cancelled."},
              "400": {"$ref": "#/components/responses/WebError"},
              "401": {"$ref": "#/components/responses/WebError"},
              "409": {"$ref": "#/components/responses/WebError"},
              "429": {"$ref": "#/components/responses/TooManyRequests"},
              "500": {"$ref": "#/components/responses/WebError"},
              "502": {"$ref": "#/components/responses/WebError"}
            }
          }
        },
        "/account/logout": {
          "post": {
            "tags": ["web"], "operationId": "webLogout", "summary": "Ends this browser's session.",
            "security": [{"sessionCookie": []}],
            "requestBody": {"$ref": "#/components/requestBodies/AccountForm"},
            "responses": {"303": {"description": "To /."}, "403": {"$ref": "#/components/responses/WebError"}, "500": {"$ref": "#/components/responses/WebError"}}
          }
        },
        "/account/sessions/end-others": {
          "post": {
            "tags": ["web"], "operationId": "webEndOtherSessions", "summary": "Ends every other session of the user.",
            "security": [{"sessionCookie": []}],
            "requestBody": {"$ref": "#/components/requestBodies/AccountForm"},
            "responses": {"303": {"description": "To /account."}, "403": {"$ref": "#/components/responses/WebError"}, "500": {"$ref": "#/components/responses/WebError"}}
          }
        },
        "/account/sessions/{id}/end": {
          "post": {
            "tags": ["web"], "operationId": "webEndSession", "summary": "Ends one of the user's own sessions.",
            "security": [{"sessionCookie": []}],
            "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
            "requestBody": {"$ref": "#/components/requestBodies/AccountForm"},
            "responses": {"303": {"description": "To /account, or to / when it was this browser's."}, "403": {"$ref": "#/components/responses/WebError"}, "500": {"$ref": "#/components/responses/WebError"}}
          }
        },
        "/account/delete": {
          "post": {
            "tags": ["web"], "operationId": "webDeleteAccount", "summary": "Deletes the account (confirm=yes), as DELETE /api/account does.",
            "security": [{"sessionCookie": []}],
            "requestBody": {"$ref": "#/components/requestBodies/AccountForm"},
            "responses": {
              "303": {"description": "To /?deleted=1, the session cookie cleared."},
              "400": {"$ref": "#/components/responses/WebError"},
              "403": {"$ref": "#/components/responses/WebError"},
              "500": {"$ref": "#/components/responses/WebError"}
            }
          }
        },
        "/auth/password/sign-in": {
          "post": {
            "tags": ["web"], "operationId": "webPasswordSignIn", "summary": "The sign-in page's email and password form.",
            "requestBody": {"$ref": "#/components/requestBodies/SignInPageForm"},
            "responses": {
              "303": {"description": "Signed in: to /account with the siwa_session cookie; refused: to /?error= with the API's error code."},
              "403": {"$ref": "#/components/responses/WebError"},
              "429": {"$ref": "#/components/responses/TooManyRequests"},
              "500": {"$ref": "#/components/responses/WebError"}
            }
          }
        },
        "/auth/password/sign-up": {
          "post": {
            "tags": ["web"], "operationId": "webPasswordSignUp", "summary": "The sign-in page's create-an-account form (email, password, given_name).",
            "requestBody": {"$ref": "#/components/requestBodies/SignInPageForm"},
            "responses": {
              "303": {"description": "Created: to /account with the siwa_session cookie; refused: to /?error=."},
              "403": {"$ref": "#/components/responses/WebError"},
              "429": {"$ref": "#/components/responses/TooManyRequests"},
              "500": {"$ref": "#/components/responses/WebError"}
            }
          }
        },
        "/auth/password/reset-request": {
          "post": {
            "tags": ["web"], "operationId": "webPasswordResetRequest", "summary": "The sign-in page's forgot-password form.",
            "requestBody": {"$ref": "#/components/requestBodies/SignInPageForm"},
            "responses": {
              "303": {"description": "To /?reset=requested whether or not the email has a password; to /?error=not_configured without smtp_url or webhook_url."},
              "403": {"$ref": "#/components/responses/WebError"},
              "429": {"$ref": "#/components/responses/TooManyRequests"},
              "500": {"$ref": "#/components/responses/WebError"}
            }
          }
        },
        "/verify-email": {
          "get": {
            "tags": ["web"], "operationId": "verifyEmailPage", "summary": "The page a verification code leads to: a button that posts the code (fetching the page uses nothing up), then the outcome (done=1 or error=).",
            "parameters": [{"name": "code", "in": "query", "schema": {"type": "string"}}, {"$ref": "#/components/parameters/PageLanguage"}],
            "responses": {"200": {"description": "The page.", "content": {"text/html": {"schema": {"type": "string"}}}}}
          }
        },
        "/auth/email/verify": {
          "post": {
            "tags": ["web"], "operationId": "webVerifyEmail", "summary": "The verification page's button (code, csrf).",
            "requestBody": {"$ref": "#/components/requestBodies/SignInPageForm"},
            "responses": {
              "303": {"description": "To /verify-email?done=1, or /verify-email?error=invalid_grant."},
              "403": {"$ref": "#/components/responses/WebError"},
              "429": {"$ref": "#/components/responses/TooManyRequests"},
              "500": {"$ref": "#/components/responses/WebError"}
            }
          }
        },
        "/reset-password": {
          "get": {
            "tags": ["web"], "operationId": "resetPasswordPage", "summary": "The page a reset code leads to: the code and a new password.",
            "parameters": [{"name": "code", "in": "query", "schema": {"type": "string"}}, {"$ref": "#/components/parameters/PageLanguage"}],
            "responses": {"200": {"description": "The page.", "content": {"text/html": {"schema": {"type": "string"}}}}}
          }
        },
        "/auth/password/reset": {
          "post": {
            "tags": ["web"], "operationId": "webPasswordReset", "summary": "The reset page's form (code, new_password).",
            "requestBody": {"$ref": "#/components/requestBodies/SignInPageForm"},
            "responses": {
              "303": {"description": "To /?reset=done; refused: back to /reset-password?error=."},
              "403": {"$ref": "#/components/responses/WebError"},
              "429": {"$ref": "#/components/responses/TooManyRequests"},
              "500": {"$ref": "#/components/responses/WebError"}
            }
          }
        },
        "/account/password": {
          "post": {
            "tags": ["web"], "operationId": "webSetPassword", "summary": "Sets or changes the password (current_password, new_password), as PUT /api/account/password.",
            "security": [{"sessionCookie": []}],
            "requestBody": {"$ref": "#/components/requestBodies/AccountForm"},
            "responses": {"303": {"description": "To /account?password=set, or /account?error=."}, "403": {"$ref": "#/components/responses/WebError"}, "500": {"$ref": "#/components/responses/WebError"}}
          }
        },
        "/account/password/remove": {
          "post": {
            "tags": ["web"], "operationId": "webRemovePassword", "summary": "Removes the password, as DELETE /api/account/password.",
            "security": [{"sessionCookie": []}],
            "requestBody": {"$ref": "#/components/requestBodies/AccountForm"},
            "responses": {"303": {"description": "To /account?password=removed, or /account?error=last_sign_in_method."}, "403": {"$ref": "#/components/responses/WebError"}, "500": {"$ref": "#/components/responses/WebError"}}
          }
        },
        "/auth/apple/link": {
          "get": {
            "tags": ["web"], "operationId": "webLinkApple",
            "summary": "Add Sign in with Apple (a link of the account page): to Apple's authorize page; the state remembers the session, and Apple's callback links the Apple ID to its user.",
            "security": [{"sessionCookie": []}],
            "parameters": [{"name": "csrf", "in": "query", "required": true, "description": "The account page's CSRF token.", "schema": {"type": "string"}}],
            "responses": {
              "302": {"description": "To Apple with the siwa_auth binding cookie, back on /account?linked=1."},
              "303": {"description": "To /account?error=reauthentication_required for a session older than 10 minutes, or to / without a session."},
              "403": {"$ref": "#/components/responses/WebError"},
              "429": {"$ref": "#/components/responses/TooManyRequests"},
              "500": {"$ref": "#/components/responses/WebError"}
            }
          }
        },
        "/account/apple/remove": {
          "post": {
            "tags": ["web"], "operationId": "webRemoveApple", "summary": "Removes Sign in with Apple, as DELETE /api/account/apple.",
            "security": [{"sessionCookie": []}],
            "requestBody": {"$ref": "#/components/requestBodies/AccountForm"},
            "responses": {"303": {"description": "To /account?apple=removed, or /account?error=last_sign_in_method."}, "403": {"$ref": "#/components/responses/WebError"}, "500": {"$ref": "#/components/responses/WebError"}}
          }
        },
        "/static/siwa.css": {
          "get": {
            "tags": ["web"], "operationId": "stylesheet", "summary": "The pages' stylesheet.",
            "responses": {"200": {"description": "CSS.", "content": {"text/css": {"schema": {"type": "string"}}}}}
          }
        },
        "/static/siwa.js": {
          "get": {
            "tags": ["web"], "operationId": "script", "summary": "Sign in with Apple JS popup mode for the sign-in page.",
            "responses": {"200": {"description": "JavaScript.", "content": {"text/javascript": {"schema": {"type": "string"}}}}}
          }
        }
      },
      "components": {
        "securitySchemes": {
          "bearer": {"type": "http", "scheme": "bearer", "description": "The session token from a sign-in."},
          "sessionCookie": {"type": "apiKey", "in": "cookie", "name": "\#(SessionCookies.sessionName)", "description": "The web flow's session cookie. State-changing requests must carry an Origin equal to public_url's origin or listed in cors_origins."},
          "adminToken": {"type": "http", "scheme": "bearer", "description": "The admin_token setting (at least 32 characters), compared in constant time."}
        },
        "parameters": {
          "UserID": {"name": "id", "in": "path", "required": true, "description": "The user's id (usr_…).", "schema": {"type": "string"}},
          "EventCursor": {"name": "cursor", "in": "query", "description": "next_cursor of the previous page, as it was given; pages stay true while events are written.", "schema": {"type": "string"}},
          "PageLanguage": {"name": "lang", "in": "query", "description": "The page's language, en or ko; without it (or with another value) the Accept-Language header chooses, else en. The page's forms and links keep it.", "schema": {"type": "string"}}
        },
        "requestBodies": {
          "SignInPageForm": {
            "required": true,
            "content": {
              "application/x-www-form-urlencoded": {
                "schema": {
                  "type": "object", "required": ["csrf"],
                  "properties": {
                    "csrf": {"type": "string", "description": "The sign-in page's token, bound to the siwa_form cookie."},
                    "email": {"type": "string"}, "password": {"type": "string"}, "given_name": {"type": "string"},
                    "code": {"type": "string"}, "new_password": {"type": "string"}
                  }
                }
              }
            }
          },
          "AccountForm": {
            "required": true,
            "content": {
              "application/x-www-form-urlencoded": {
                "schema": {
                  "type": "object", "required": ["csrf"],
                  "properties": {
                    "csrf": {"type": "string", "description": "The account page's CSRF token."}, "confirm": {"const": "yes"},
                    "current_password": {"type": "string"}, "new_password": {"type": "string"}
                  }
                }
              }
            }
          }
        },
        "responses": {
          "WebError": {"description": "An HTML page saying what went wrong; nothing was created or changed.", "content": {"text/html": {"schema": {"type": "string"}}}},
          "Unauthenticated": {
            "description": "`unauthenticated`: no live session.",
            "headers": {"WWW-Authenticate": {"schema": {"const": "Bearer"}}},
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "AdminUnauthenticated": {
            "description": "`unauthenticated`: no Authorization: Bearer with the admin token. Also the answer, without the token, to any /admin path that is no route.",
            "headers": {"WWW-Authenticate": {"description": "Bearer", "schema": {"const": "Bearer"}}},
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "UserNotFound": {"description": "`not_found`: no such user.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
          "InvalidRequest": {"description": "`invalid_request`: error_description says what is wrong; nothing changed.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
          "Forbidden": {"description": "`forbidden`: a cookie-authenticated change whose Origin is neither this site's nor one of cors_origins.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
          "TooManyRequests": {
            "description": "`too_many_requests`: this client address is past rate_limit; nothing was stored.",
            "headers": {"Retry-After": {"description": "Seconds until the next request is allowed.", "schema": {"type": "integer", "minimum": 1}}},
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "PayloadTooLarge": {"description": "`payload_too_large`: the body is over max_body_bytes.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
          "InternalError": {"description": "`internal_error`: the change could not be stored; nothing changed.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
          "InvalidCredentials": {"description": "`invalid_credentials`: the email or the password is wrong (alike for both).", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
          "TooManyAttempts": {
            "description": "`too_many_attempts`: 5 failures for this email or 20 from this address within 15 minutes (or `too_many_requests`, past rate_limit).",
            "headers": {"Retry-After": {"description": "Seconds until the window passes.", "schema": {"type": "integer", "minimum": 1}}},
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "Busy": {"description": "`busy`: every password-hashing thread is busy and the queue is full; try again shortly.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
          "LastSignInMethod": {"description": "`last_sign_in_method`: it is the account's only way to sign in.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
        },
        "schemas": {
          "Error": {
            "type": "object", "required": ["error", "error_description"],
            "properties": {
              "error": {"type": "string", "description": "Stable, machine-readable code."},
              "error_description": {"type": "string", "description": "For people; for invalid_token, exactly the reason code."}
            }
          },
          "Health": {"type": "object", "required": ["status"], "properties": {"status": {"const": "ok"}}},
          "Ready": {"type": "object", "required": ["status"], "properties": {"status": {"const": "ready"}}},
          "NotReady": {
            "type": "object", "required": ["status", "reasons"],
            "properties": {"status": {"const": "not_ready"}, "reasons": {"type": "array", "items": {"enum": ["database", "keys"]}}}
          },
          "Nonce": {
            "type": "object", "required": ["nonce", "expires_at"],
            "properties": {"nonce": {"type": "string"}, "expires_at": {"type": "string", "format": "date-time"}}
          },
          "SignInRequest": {
            "type": "object", "required": ["identity_token"],
            "properties": {
              "identity_token": {"type": "string", "minLength": 1, "description": "The identity token (a JWS) from Apple."},
              "authorization_code": {"type": ["string", "null"], "description": "Exchanged once at Apple's auth/token."},
              "nonce": {"type": ["string", "null"], "description": "The raw nonce; the token may hold it raw or as its SHA-256 (hex or base64url)."},
              "user": {
                "type": ["object", "null"], "description": "Apple's one-time user object, first sign-in only.",
                "properties": {
                  "name": {"type": ["object", "null"], "properties": {"firstName": {"type": ["string", "null"]}, "lastName": {"type": ["string", "null"]}}},
                  "email": {"type": ["string", "null"]}
                }
              },
              "device_name": {"type": ["string", "null"], "description": "Shown in the session list (at most 256 bytes of UTF-8 kept)."}
            }
          },
          "PasswordSignUpRequest": {
            "type": "object", "required": ["email", "password"],
            "properties": {
              "email": {"type": "string", "minLength": 1},
              "password": {"type": "string", "minLength": 1},
              "name": {"type": ["object", "null"], "properties": {"given": {"type": ["string", "null"]}, "family": {"type": ["string", "null"]}}},
              "device_name": {"type": ["string", "null"]}
            }
          },
          "PasswordSignInRequest": {
            "type": "object", "required": ["email", "password"],
            "properties": {
              "email": {"type": "string", "minLength": 1},
              "password": {"type": "string", "minLength": 1},
              "device_name": {"type": ["string", "null"]}
            }
          },
          "UpgradeRequest": {
            "type": "object", "required": ["email", "password", "identity_token"],
            "properties": {
              "email": {"type": "string", "minLength": 1},
              "password": {"type": "string", "minLength": 1},
              "identity_token": {"type": "string", "minLength": 1},
              "authorization_code": {"type": ["string", "null"]},
              "nonce": {"type": ["string", "null"]},
              "device_name": {"type": ["string", "null"]}
            }
          },
          "SignInResponse": {
            "type": "object", "required": ["session", "user", "created"],
            "properties": {
              "session": {
                "type": "object", "required": ["token", "expires_at"],
                "properties": {"token": {"type": "string", "description": "256 random bits, base64url."}, "expires_at": {"type": "string", "format": "date-time"}}
              },
              "user": {"$ref": "#/components/schemas/User"},
              "created": {"type": "boolean"}
            }
          },
          "User": {
            "type": "object",
            "required": ["id", "apple_sub", "email", "email_verified", "is_private_email", "email_forwarding", "real_user_status", "name", "apple_credential", "external_id", "sign_in_methods", "locale", "created_at", "updated_at"],
            "properties": {
              "id": {"type": "string"},
              "apple_sub": {"type": ["string", "null"], "description": "null for a user without an Apple ID."},
              "email": {"type": ["string", "null"]},
              "email_verified": {"type": "boolean"},
              "is_private_email": {"type": "boolean"},
              "email_forwarding": {"enum": ["enabled", "disabled", null]},
              "real_user_status": {"enum": ["unsupported", "unknown", "likely_real"]},
              "name": {
                "type": ["object", "null"], "required": ["given", "family"],
                "properties": {"given": {"type": ["string", "null"]}, "family": {"type": ["string", "null"]}}
              },
              "apple_credential": {"enum": ["authorized", "revoked", null], "description": "null for a user without an Apple ID."},
              "external_id": {"type": ["string", "null"]},
              "sign_in_methods": {"type": "array", "items": {"enum": ["apple", "password"]}},
              "locale": {"enum": ["en", "ko"], "description": "The language of the mail written to the user: set at creation from `Accept-Language`, changed by `PATCH /api/account`."},
              "created_at": {"type": "string", "format": "date-time"},
              "updated_at": {"type": "string", "format": "date-time"}
            }
          },
          "Session": {
            "type": "object", "required": ["id", "created_at", "last_seen_at", "expires_at", "device_name", "method", "ip", "user_agent"],
            "properties": {
              "id": {"type": "string"},
              "created_at": {"type": "string", "format": "date-time"},
              "last_seen_at": {"type": "string", "format": "date-time"},
              "expires_at": {"type": "string", "format": "date-time"},
              "device_name": {"type": ["string", "null"]},
              "method": {"enum": ["apple", "password", "upgrade", "exchange", "web", null], "description": "How the session was made; null for sessions made before sessions knew."},
              "ip": {"type": ["string", "null"], "description": "The client address of the request that made it, after trusted_proxies."},
              "user_agent": {"type": ["string", "null"], "description": "That request's User-Agent, at most 256 bytes of UTF-8."}
            }
          },
          "SessionList": {
            "type": "object", "required": ["sessions"],
            "properties": {
              "sessions": {
                "type": "array",
                "items": {
                  "allOf": [
                    {"$ref": "#/components/schemas/Session"},
                    {"type": "object", "required": ["current"], "properties": {"current": {"type": "boolean", "description": "Whether it is the session of this request."}}}
                  ]
                }
              }
            }
          },
          "Event": {
            "type": "object", "required": ["id", "at", "type", "user_id", "session_id", "actor", "ip", "user_agent", "detail"],
            "properties": {
              "id": {"type": "string", "description": "evt_ and 32 hex digits."},
              "at": {"type": "string", "format": "date-time"},
              "type": {"type": "string", "description": "user.created, sign_in.succeeded, session.ended, apple.consent_revoked, … (docs/reference/http-api.md lists them)."},
              "user_id": {"type": ["string", "null"]},
              "session_id": {"type": ["string", "null"]},
              "actor": {"enum": ["user", "apple", "admin", "system"]},
              "ip": {"type": ["string", "null"], "description": "The client's address, after trusted_proxies."},
              "user_agent": {"type": ["string", "null"], "description": "At most 256 bytes of UTF-8."},
              "detail": {"type": "object", "description": "What the type says more (method, reason, fields); never a secret."}
            }
          },
          "EventList": {
            "type": "object", "required": ["events", "next_cursor"],
            "properties": {
              "events": {"type": "array", "items": {"$ref": "#/components/schemas/Event"}},
              "next_cursor": {"type": ["string", "null"], "description": "Pass as cursor for the next page; null on the last page."}
            }
          },
          "UserList": {
            "type": "object", "required": ["users", "next_cursor"],
            "properties": {
              "users": {"type": "array", "items": {"$ref": "#/components/schemas/User"}},
              "next_cursor": {"type": ["string", "null"], "description": "Pass as cursor for the next page; null on the last page."}
            }
          },
          "UserWithSessions": {
            "allOf": [
              {"$ref": "#/components/schemas/User"},
              {"type": "object", "required": ["sessions"], "properties": {"sessions": {"type": "array", "items": {"$ref": "#/components/schemas/Session"}}}}
            ]
          },
          "ExternalIDPatch": {
            "type": "object", "required": ["external_id"], "additionalProperties": false,
            "properties": {
              "external_id": {
                "type": ["string", "null"], "minLength": 1,
                "description": "The team's own id for the user: 1 to 256 bytes of UTF-8 without control characters, unique; null clears it."
              }
            }
          },
          "AccountDeleted": {
            "type": "object", "required": ["status", "apple_revocation"],
            "properties": {"status": {"const": "deleted"}, "apple_revocation": {"enum": ["done", "pending", "none"]}}
          },
          "NotificationRequest": {
            "type": "object", "required": ["payload"],
            "properties": {"payload": {"type": "string", "description": "Apple's compact JWS."}}
          },
          "AppleFormPost": {
            "type": "object",
            "properties": {
              "code": {"type": "string"}, "id_token": {"type": "string"}, "state": {"type": "string"},
              "user": {"type": "string", "description": "A JSON string, first authorization only."},
              "error": {"type": "string", "description": "user_cancelled_authorize when the person cancelled."}
            }
          },
          "AccessToken": {
            "type": "object", "required": ["access_token", "token_type", "expires_in"],
            "properties": {
              "access_token": {"type": "string", "description": "A compact JWS (RFC 9068 `at+jwt`)."},
              "token_type": {"const": "Bearer"},
              "expires_in": {"type": "integer", "minimum": 1, "maximum": 3600, "description": "Seconds: access_token_ttl."}
            }
          },
          "JSONWebKeySet": {
            "type": "object", "required": ["keys"],
            "properties": {
              "keys": {
                "type": "array",
                "items": {
                  "type": "object", "required": ["kty", "crv", "x", "y", "alg", "use", "kid"],
                  "properties": {
                    "kty": {"const": "EC"}, "crv": {"const": "P-256"},
                    "x": {"type": "string", "description": "base64url, 32 bytes."}, "y": {"type": "string", "description": "base64url, 32 bytes."},
                    "alg": {"const": "ES256"}, "use": {"const": "sig"},
                    "kid": {"type": "string", "description": "The key's RFC 7638 thumbprint."}
                  }
                }
              }
            }
          },
          "NotificationStatus": {
            "type": "object", "required": ["status"],
            "properties": {"status": {"enum": ["processed", "duplicate", "ignored"]}}
          }
        }
      }
    }
    """#
}

/// `GET /openapi.json`: the OpenAPI 3.1 description of the HTTP API (SPEC §4). Written out
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
        "license": {"name": "Proprietary", "identifier": "LicenseRef-Proprietary"}
      },
      "tags": [
        {"name": "operations", "description": "Health, readiness, metrics and this document."},
        {"name": "sign-in", "description": "Native sign-in (mobile clients, and Sign in with Apple JS popup mode)."},
        {"name": "account", "description": "The signed-in user, their sessions and account deletion."},
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
              "413": {"$ref": "#/components/responses/PayloadTooLarge"},
              "429": {"$ref": "#/components/responses/TooManyRequests"},
              "500": {"$ref": "#/components/responses/InternalError"},
              "502": {"description": "`apple_unavailable`: Apple unreachable, timed out or failing.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
              "503": {"description": "`keys_unavailable`: Apple's signing keys are not loaded (fresh or persisted).", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
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
            "tags": ["account"], "operationId": "listSessions", "summary": "The user's live sessions, newest first.",
            "security": [{"bearer": []}, {"sessionCookie": []}],
            "responses": {
              "200": {"description": "The sessions.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SessionList"}}}},
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
              {"name": "size", "in": "query", "schema": {"enum": ["small", "medium", "large"]}}
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
          "sessionCookie": {"type": "apiKey", "in": "cookie", "name": "\#(SessionCookies.sessionName)", "description": "The web flow's session cookie. State-changing requests must carry an Origin equal to public_url's origin."},
          "adminToken": {"type": "http", "scheme": "bearer", "description": "The admin_token setting (at least 32 characters), compared in constant time."}
        },
        "parameters": {
          "UserID": {"name": "id", "in": "path", "required": true, "description": "The user's id (usr_…).", "schema": {"type": "string"}}
        },
        "requestBodies": {
          "AccountForm": {
            "required": true,
            "content": {
              "application/x-www-form-urlencoded": {
                "schema": {
                  "type": "object", "required": ["csrf"],
                  "properties": {"csrf": {"type": "string", "description": "The account page's CSRF token."}, "confirm": {"const": "yes"}}
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
          "Forbidden": {"description": "`forbidden`: a cookie-authenticated change without this site's Origin.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
          "TooManyRequests": {
            "description": "`too_many_requests`: this client address is past rate_limit; nothing was stored.",
            "headers": {"Retry-After": {"description": "Seconds until the next request is allowed.", "schema": {"type": "integer", "minimum": 1}}},
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "PayloadTooLarge": {"description": "`payload_too_large`: the body is over max_body_bytes.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
          "InternalError": {"description": "`internal_error`: the change could not be stored; nothing changed.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
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
            "required": ["id", "apple_sub", "email", "email_verified", "is_private_email", "email_forwarding", "real_user_status", "name", "apple_credential", "external_id", "sign_in_methods", "created_at", "updated_at"],
            "properties": {
              "id": {"type": "string"},
              "apple_sub": {"type": "string"},
              "email": {"type": ["string", "null"]},
              "email_verified": {"type": "boolean"},
              "is_private_email": {"type": "boolean"},
              "email_forwarding": {"enum": ["enabled", "disabled", null]},
              "real_user_status": {"enum": ["unsupported", "unknown", "likely_real"]},
              "name": {
                "type": ["object", "null"], "required": ["given", "family"],
                "properties": {"given": {"type": ["string", "null"]}, "family": {"type": ["string", "null"]}}
              },
              "apple_credential": {"enum": ["authorized", "revoked"]},
              "external_id": {"type": ["string", "null"]},
              "sign_in_methods": {"type": "array", "items": {"enum": ["apple", "password"]}},
              "created_at": {"type": "string", "format": "date-time"},
              "updated_at": {"type": "string", "format": "date-time"}
            }
          },
          "Session": {
            "type": "object", "required": ["id", "created_at", "last_seen_at", "expires_at", "device_name"],
            "properties": {
              "id": {"type": "string"},
              "created_at": {"type": "string", "format": "date-time"},
              "last_seen_at": {"type": "string", "format": "date-time"},
              "expires_at": {"type": "string", "format": "date-time"},
              "device_name": {"type": ["string", "null"]}
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
          "NotificationStatus": {
            "type": "object", "required": ["status"],
            "properties": {"status": {"enum": ["processed", "duplicate", "ignored"]}}
          }
        }
      }
    }
    """#
}

/**
 * The introduction of the API reference (`info.description`, Markdown). Redoc turns its
 * `#` headings into sections of the side menu. The longer guide is docs/API.md.
 */
export const API_OVERVIEW = `
Call history, outbound calls, SMS, leads, usage and signed webhook delivery for AI
receptionists. Every route below lives under \`/api/v1\` and answers under the shorter \`/v1\`
too. JSON in and out (UTF-8, bodies up to 1 MiB); the one exception is the CSV upload of
\`POST /leads/import\` (\`text/csv\`, up to 20 MiB).

The TypeScript SDK \`@switchboard/sdk\` (\`packages/sdk\` in the repository) is generated from
this document and adds pagination, idempotency keys, retries and webhook verification.

# Authentication

Send an API key as \`Authorization: Bearer sk_live_…\`. Operators create keys with the
operator CLI; a key is shown once. Scopes nest: \`admin\` includes \`write\`, which includes
\`read\`. \`read\` covers every GET; \`write\` creating, provisioning and updating
receptionists, starting calls, sending SMS, and creating, updating and importing leads;
\`admin\` every \`/webhooks\` operation and a receptionist's \`webhook_url\`. A missing, unknown or
revoked key is a 401 (\`WWW-Authenticate: Bearer\`); a key without the scope is a 403
\`insufficient_scope\`. Another tenant's resource is a 404, as if it did not exist.

# Errors

Every error has one shape, and every response carries \`X-Request-Id\`:

\`\`\`json
{"error": {"type": "invalid_request_error", "code": "invalid_parameter",
           "message": "limit must be an integer between 1 and 100", "param": "limit",
           "doc_url": "docs/API.md#error-invalid_parameter"},
 "request_id": "req_8a3f0c2b9d4e1f6a7b5c2d90"}
\`\`\`

Send your own \`X-Request-Id\` (1 to 128 of \`A-Z a-z 0-9 _ . : -\`) and it becomes the
request's id; any other value is ignored and the request gets one of ours.

\`type\` is \`invalid_request_error\` (400, 404, 405, 409, 412, 413, 415, 422),
\`authentication_error\` (401), \`permission_error\` (403), \`rate_limit_error\` (429),
\`service_unavailable\` (503) or \`api_error\` (500). \`code\` is stable and made for programs;
\`message\` is for people. \`doc_url\` is where the code is documented: its anchor in the
repository's API reference, \`docs/API.md#error-<code>\` (a path from the repository's root).
Retry 429 and 503 after \`Retry-After\` seconds.

# Pagination

Lists take \`limit\` (1 to 100, default 20; lead search 1 to 50, default 10) and \`cursor\`,
newest first.
\`GET /calls\` answers \`{calls, next_cursor, scope}\` (\`next_cursor\` is null on the last page);
every other list answers \`{data, has_more, cursor}\`. Pass the cursor back unchanged, with
the same filters. Cursors are signed and bound to your tenant: an altered one is a 400
\`invalid_cursor\`.

# Idempotency

Every creating \`POST\` (\`/calls/outbound\`, \`/receptionists\`, \`/sms/send\`, \`/leads\`,
\`/leads/import\`) accepts \`Idempotency-Key\` (1 to 255 printable ASCII characters, kept 24
hours). The same key and body give back the first response with
\`Idempotent-Replayed: true\` and never create anything twice; the same key with another body
is a 422 \`idempotency_key_reused\`; while the first request still runs, a 409
\`idempotency_request_in_progress\` with \`Retry-After: 1\`.

# Conditional edits

A webhook subscription, receptionist, lead or campaign read or edited comes with its version
in \`ETag\` (\`W/"3"\`). Send it back in \`If-Match\` on \`PATCH\` (and \`DELETE\` of a
subscription, \`POST /campaigns/{id}/cancel\`) and the edit applies only if nobody changed the
resource since; otherwise a 412 \`precondition_failed\` carrying the current \`ETag\`, and
nothing changes. \`*\` matches any version; without \`If-Match\` an edit applies as before.

# Webhooks

Subscribe an https endpoint with \`POST /webhooks\`; the response is the only one that shows
its \`signing_secret\` (\`whsec_…\`). Every delivery is signed twice: \`x-service-signature\`
(hex HMAC-SHA256 keyed with the whole secret over \`timestamp.body\`) and the Standard
Webhooks \`webhook-signature\` (any Standard Webhooks or Svix library verifies it). The
events and their payloads are listed under **Webhook events**. Delivery is at least once
(deduplicate on the event id), 3 attempts, and a subscription that keeps failing is
disabled until \`POST /webhooks/{id}/enable\`.

# Versioning

\`v1\` changes only by addition: new operations, new optional request fields, new response
fields, new event types and new error codes. Clients must ignore fields they do not know. A
breaking change gets a new version prefix; a deprecated operation is marked \`deprecated\` in
this document and keeps working for at least 6 months.
`.trim();

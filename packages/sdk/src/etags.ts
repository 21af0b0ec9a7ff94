/**
 * The ETag of each resource the API answered with one (a read or an edit of a webhook
 * subscription, receptionist, lead or campaign), kept beside the object rather than in it,
 * so that the object stays exactly the API's JSON. Weak: an object dropped by the caller
 * takes its ETag with it.
 */
const etags = new WeakMap<object, string>();

/** Remembers the ETag of an answer's body (the transport's, for every JSON object). */
export function rememberEtag(resource: object, etag: string): void {
  etags.set(resource, etag);
}

/**
 * The version of a resource as this client received it (the `ETag` of the answer that
 * returned this very object, e.g. `W/"3"`): pass it as `ifMatch` to an edit, which then
 * applies only if nobody changed the resource since (else a 412 `precondition_failed`,
 * whose `headers` carry the current ETag). Undefined for an object no such answer returned
 * (an item of a list, a copy): read it with `get` first.
 */
export function etagOf(resource: object): string | undefined {
  return etags.get(resource);
}

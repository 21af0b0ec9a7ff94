/** One outbound message the sender hands to a provider. */
export interface SmsRequest {
  smsId: string;
  receptionistId: string;
  /** The receptionist's number: the sender the recipient sees. */
  from: string;
  /** The recipient (E.164). */
  to: string;
  message: string;
  segments: number;
}

/** What the carrier said: it took the message (with its id for it), or refused it. */
export type SmsSendResult =
  { status: 'accepted'; providerMessageId: string } | { status: 'rejected'; errorCode: string };

/**
 * Sends SMS through a carrier. The sender claims a queued message (queued → sending, a
 * durable commit) and then calls `send` at most once for it: a duplicated job, a job re-run
 * after a crash or a reconciler re-add finds the claim spent and never calls `send` again.
 * `accepted` makes the message `sent` (and emits `sms.sent`), `rejected` makes it `failed`
 * with `errorCode`; if `send` throws the message fails as `provider_error`. A sender that
 * dies between the claim and recording the answer leaves the message `sending`; the
 * reconciler later fails it as `send_interrupted` rather than risk a second hand-off.
 * How to add a real provider (Twilio): docs/TELEPHONY.md.
 */
export interface SmsProvider {
  readonly name: string;
  send(request: SmsRequest): Promise<SmsSendResult>;
  /** Releases clients and timers; called once when the worker stops. */
  close(): Promise<void>;
}

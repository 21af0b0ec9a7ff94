import type { FromSchema } from 'json-schema-to-ts';
import type {
  callEndedMessage,
  callMissedMessage,
  callStartedMessage,
  smsInboundMessage,
  smsStatusMessage,
} from './schemas';

export type CallStartedMessage = FromSchema<typeof callStartedMessage>;
export type CallEndedMessage = FromSchema<typeof callEndedMessage>;
export type CallMissedMessage = FromSchema<typeof callMissedMessage>;
export type SmsInboundMessage = FromSchema<typeof smsInboundMessage>;
export type SmsStatusMessage = FromSchema<typeof smsStatusMessage>;
export type TelephonyMessage =
  CallStartedMessage | CallEndedMessage | CallMissedMessage | SmsInboundMessage | SmsStatusMessage;

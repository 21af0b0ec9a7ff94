/**
 * SMS rules and outcomes (docs/API.md, SMS): the text rules (segments, opt-out and opt-in
 * keywords, safe text, keyword replies, campaign templates) and the events of a message's
 * outcomes with the carrier receipts that make them. A package because the API, the worker,
 * the CLI and telephony ingestion all use it; the SMS lifecycle's statements are
 * packages/db's (SmsLifecycle).
 */
export * from './text';
export * from './campaign-text';
export * from './replies';
export * from './outcomes';

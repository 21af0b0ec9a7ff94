/** Phone numbers: the one E.164 check every feature uses, and normalisation of typed input. */
export { E164_PATTERN, isPossibleE164, normalizePhone } from './phone';

/**
 * Made-up telephony for the demo and the simulators: realistic calls (who calls, what is
 * said, how it ends) as telephony messages, and fictional phone numbers. The worker's dialler
 * simulator, the CLI's `seed-demo` and `npm run demo:call` use it; nothing in the service's
 * real paths does.
 */
export * from './calls';

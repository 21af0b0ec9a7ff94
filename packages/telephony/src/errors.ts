/** The message names a receptionist that does not exist. */
export class UnknownReceptionistError extends Error {
  constructor(readonly receptionistId: string) {
    super(`unknown receptionist ${receptionistId}`);
    this.name = 'UnknownReceptionistError';
  }
}

/** A message type this deployment cannot apply yet. */
export class UnsupportedMessageError extends Error {
  constructor(readonly messageType: string) {
    super(`${messageType} messages are not supported yet`);
    this.name = 'UnsupportedMessageError';
  }
}

/** The message names a receptionist that does not exist. */
export class UnknownReceptionistError extends Error {
  constructor(readonly receptionistId: string) {
    super(`unknown receptionist ${receptionistId}`);
    this.name = 'UnknownReceptionistError';
  }
}

/** An inbound SMS to a number that is not its receptionist's (released, or never ours). */
export class NumberNotOwnedError extends Error {
  constructor(
    readonly receptionistId: string,
    readonly number: string,
  ) {
    super(`${number} is not the number of receptionist ${receptionistId}`);
    this.name = 'NumberNotOwnedError';
  }
}

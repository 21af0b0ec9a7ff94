/** A field of a lead that is not acceptable (API: 400 invalid_parameter naming `field`). */
export class LeadFieldError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'LeadFieldError';
  }
}

/** The phone (or, for a lead without phone, the email) belongs to another lead: 409. */
export class LeadExistsError extends Error {
  constructor(
    readonly leadId: string,
    readonly by: 'phone' | 'email',
  ) {
    super(`A lead with this ${by} already exists: ${leadId}`);
    this.name = 'LeadExistsError';
  }
}

/** The receptionist_id is not one of the tenant's receptionists: 404. */
export class LeadReceptionistNotFoundError extends Error {
  constructor(readonly receptionistId: string) {
    super(`No such receptionist ${receptionistId}`);
    this.name = 'LeadReceptionistNotFoundError';
  }
}

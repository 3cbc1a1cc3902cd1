/** decisions §7: the first quote created moves a `new` submission to `quoted`. Dispatched by quotes. */
export class MarkSubmissionQuoted {
  constructor(
    readonly organizationId: string,
    readonly submissionId: string,
    readonly quoteId: string,
    readonly actor: string,
  ) {}
}

/** decisions §7: an accepted quote closes its submission. Dispatched by quotes. */
export class CloseSubmissionOnAcceptance {
  constructor(
    readonly organizationId: string,
    readonly submissionId: string,
    readonly quoteId: string,
    readonly actor: string,
  ) {}
}

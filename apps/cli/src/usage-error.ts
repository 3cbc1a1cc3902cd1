/** A wrong use of the CLI: printed with the usage, exit code 2. */
export class UsageError extends Error {}

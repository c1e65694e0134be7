// Why a credential was not issued or a presentation was refused: a reason a verifier can act on (and answer with),
// and a message for its logs.

export type CredentialFailure =
  | 'request'
  | 'malformed'
  | 'issuer'
  | 'signature'
  | 'expired'
  | 'audience'
  | 'nonce'
  | 'key-binding'
  | 'revoked'
  | 'status'
  | 'unreachable';

export class CredentialError extends Error {
  constructor(
    /** What failed, for a verifier's logs and answers. */
    readonly reason: CredentialFailure,
    message: string,
  ) {
    super(message);
    this.name = 'CredentialError';
  }
}

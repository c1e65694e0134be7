// The registry's and the identity hub's refusals in words a human acts on: a session that failed on chain reports
// the contract's error (e.g. "MockDocumentsNotAccepted()"), which the scan page explains rather than shows bare.

/** What each refusal means and what to do, by the contract error's name. */
const REFUSALS: Readonly<Record<string, string>> = {
  MockDocumentsNotAccepted: 'this network accepts only real passports and ID cards, and the identity app proved with a mock document',
  TooManyAgentsForHuman:
    'this person already holds as many agents as the registry allows for one human: deregister one first, or register as another person',
  AgentAlreadyRegistered: 'this agent key is already registered: use another key, or deregister the agent first',
  AgentNotRegistered: 'no agent is registered with this key, so there is nothing to remove or refresh',
  NotSameHuman: 'the proof comes from another person than the one who registered this agent: the same passport or ID card must be used',
  InvalidAgentSignature: "the agent key's signature of the registration does not match: open a new session",
  InvalidWalletSignature: "the wallet's signature of the registration does not match: open a new session",
  CurrentDateNotInValidRange: "the proof's date does not match the chain's clock: check the phone's date and scan again",
  InvalidOlderThan: 'the document does not prove the age this session asks for',
  InvalidOfac: 'the sanctions-list check this session asks for did not pass',
  InvalidForbiddenCountries: 'the document is from a country this session does not accept',
  UnsupportedAttestationId: 'this kind of document is not accepted here',
  VerificationFailed: 'the identity proof did not verify: scan the QR code again with an up-to-date identity app',
};

/** The words for a session's chain error, or undefined for one not known here. */
export function explainRefusal(error: string): string | undefined {
  const name = /^\s*(?:[\w ]*?:\s*)?(\w+)\(/.exec(error)?.[1];
  return name === undefined ? undefined : REFUSALS[name];
}

// What to do about the failures a person meets first: the registry's errors say what happened, in the contract's
// words; these say what to do next, in the command line's.
const HINTS: readonly [RegExp, string][] = [
  [
    /MockDocumentsNotAccepted/,
    "this network's identity hub accepts real passports only: on the local chains, register on --network testnet, whose hub accepts the mock identity app's documents",
  ],
  [
    /TooManyAgentsForHuman/,
    'this person already has as many agents as the registry allows (one by default): deregister one (agent-identity-registry deregister), or register as another person (the mock identity app: --document-number with a new number)',
  ],
  [
    /NotAgentOwner|NotAgentGuardian|HumanMismatch/,
    "another person proved: only the agent's own human can do this (the mock identity app: the same --document-number as at registration)",
  ],
  [/rejected/i, 'the human declined in the identity app: run the command again to open a new session'],
];

/** A sentence saying what to do about `error`, when there is one to say. */
export function hintFor(error: string): string | undefined {
  return HINTS.find(([pattern]) => pattern.test(error))?.[1];
}

/**
 * The document fields a proof discloses and the registry stores per agent (getAgentCredentials), verbatim
 * from the hub's output: strings are empty where the human did not disclose them; dates are "DD-MM-YY".
 */
export interface AgentCredentials {
  issuingState: string;
  name: readonly string[];
  idNumber: string;
  nationality: string;
  dateOfBirth: string;
  gender: string;
  expiryDate: string;
  /** The age threshold the proof satisfied (0, 18 or 21), not the person's age. */
  olderThan: bigint;
  /** OFAC checks passed: [document number, name + date of birth, name + year of birth]. */
  ofac: readonly [boolean, boolean, boolean];
}

// Proof-type labels of a provider's verification strength (0 to 100), as the interface defines them for the
// reputation and verification-status answers, and the strength label of info and verify.

export const PROOF_TYPES = ['passport', 'kyc', 'govt_id', 'liveness', 'unknown'] as const;
export type ProofType = (typeof PROOF_TYPES)[number];

/** passport >= 100, kyc >= 80, govt_id >= 60, liveness >= 40, otherwise unknown. */
export function proofTypeOf(strength: number): ProofType {
  if (strength >= 100) return 'passport';
  if (strength >= 80) return 'kyc';
  if (strength >= 60) return 'govt_id';
  if (strength >= 40) return 'liveness';
  return 'unknown';
}

/** The label of info and verify: the proof type, or `None` when the agent has no proof. */
export type StrengthLabel = ProofType | 'None';

export const strengthLabelOf = (hasProof: boolean, strength: number): StrengthLabel => (hasProof ? proofTypeOf(strength) : 'None');

// The mock identity app for test networks (library part): mock documents, the disclosure the circuit would
// reveal, the attester's signature the local hub checks, and the submission through verifySelfProof.

export * from './attestation.js';
export * from './disclosure-output.js';
export * from './document.js';
export * from './prove.js';
export * from './request.js';

// The mock identity app's pure parts: the disclosure it builds for a document, the attestation it signs
// (checked by recovering the attester, as LocalIdentityHub does), and reading a SelfApp request.

import { type Address, decodeAbiParameters, recoverTypedDataAddress, slice } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import {
  ageOn,
  attestationTypedData,
  attestDisclosure,
  BN254_SCALAR_FIELD,
  buildDisclosureOutput,
  DEFAULT_MOCK_DOCUMENT,
  documentNullifier,
  formatHubDate,
  genericDiscloseOutputV2AbiType,
  mockDocumentFor,
  proofPayload,
  proofRequestFromDeepLink,
  userContextData,
} from '../../src/identity-app/index.js';

const human: Address = '0x5B38Da6a701c568545dCfcB03FcB875f56beddC4';
const now = new Date('2026-11-22T12:00:00Z');
const base = { scope: 42n, userIdentifier: BigInt(human), now };

describe('disclosure output', () => {
  it('formats dates as DD-MM-YY and counts age in completed years', () => {
    expect(formatHubDate('2035-01-09')).toBe('09-01-35');
    expect(ageOn('2008-11-22', now)).toBe(18);
    expect(ageOn('2008-11-23', now)).toBe(17);
    expect(() => formatHubDate('2035-02-30')).toThrow();
  });

  it('reveals only what is requested, and always the expiry date', () => {
    const bare = buildDisclosureOutput({ ...base, document: DEFAULT_MOCK_DOCUMENT, requested: { minimumAge: 0, ofac: false } });
    expect(bare).toMatchObject({
      attestationId: `0x${'0'.repeat(63)}1`,
      name: ['', ''],
      nationality: '',
      issuingState: '',
      dateOfBirth: '',
      expiryDate: '01-01-35',
      olderThan: 0n,
      ofac: [false, false, false],
    });
    const full = buildDisclosureOutput({
      ...base,
      document: DEFAULT_MOCK_DOCUMENT,
      requested: { minimumAge: 21, ofac: true, name: true, nationality: true, dateOfBirth: true, gender: true, issuingState: true, idNumber: true },
    });
    expect(full).toMatchObject({
      name: ['ALICE', 'SMITH'],
      nationality: 'GBR',
      issuingState: 'GBR',
      dateOfBirth: '01-01-95',
      gender: 'F',
      idNumber: DEFAULT_MOCK_DOCUMENT.documentNumber,
      olderThan: 21n,
      ofac: [true, true, true],
    });
  });

  it('proves no age it does not have, and no OFAC clearance for a listed person', () => {
    const young = mockDocumentFor('kid', { dateOfBirth: '2010-06-01' });
    expect(buildDisclosureOutput({ ...base, document: young, requested: { minimumAge: 18, ofac: false } }).olderThan).toBe(0n);
    const listed = mockDocumentFor('x', { sanctioned: true });
    expect(buildDisclosureOutput({ ...base, document: listed, requested: { minimumAge: 0, ofac: true } }).ofac).toEqual([false, false, false]);
    const idCard = mockDocumentFor('y', { documentType: 'eu-id-card' });
    expect(buildDisclosureOutput({ ...base, document: idCard, requested: { minimumAge: 0, ofac: true } }).ofac).toEqual([false, true, true]);
  });

  it('nullifiers are per document and scope, below the BN254 field', () => {
    const a = mockDocumentFor('a');
    expect(documentNullifier(a, 1n)).toBe(documentNullifier({ ...a }, 1n));
    expect(documentNullifier(a, 1n)).not.toBe(documentNullifier(a, 2n));
    expect(documentNullifier(a, 1n)).not.toBe(documentNullifier(mockDocumentFor('b'), 1n));
    expect(documentNullifier(a, 1n)).toBeLessThan(BN254_SCALAR_FIELD);
  });
});

describe('attestation', () => {
  it('signs the EIP-712 DocumentAttestation and encodes the proof as the hub decodes it', async () => {
    const attester = privateKeyToAccount('0x00000000000000000000000000000000000000000000000000000000000a77e5');
    const hub: Address = '0x1111111111111111111111111111111111111111';
    const context = userContextData({ destChainId: 11142220, userId: human, userDefinedData: 'R0' });
    expect(slice(context, 64)).toBe('0x5230');
    const output = buildDisclosureOutput({ ...base, document: DEFAULT_MOCK_DOCUMENT, requested: { minimumAge: 0, ofac: false } });
    const input = {
      hub,
      chainId: 11142220,
      scope: 42n,
      attestationId: output.attestationId,
      userContextData: context,
      output,
      mockDocument: true,
      currentDate: 1_795_000_000n,
    };
    const proof = await attestDisclosure(attester, input);
    const [mock, date, decoded, signature] = decodeAbiParameters(
      [{ type: 'bool' }, { type: 'uint256' }, genericDiscloseOutputV2AbiType, { type: 'bytes' }],
      proof,
    );
    expect([mock, date]).toEqual([true, 1_795_000_000n]);
    expect(decoded).toEqual(output);
    expect(await recoverTypedDataAddress({ ...attestationTypedData(input), signature })).toBe(attester.address);
    expect(slice(proofPayload(output.attestationId, proof), 0, 32)).toBe(output.attestationId);
  });
});

describe('proof request', () => {
  it('reads a SelfApp deep link', () => {
    const selfApp = {
      endpoint: '0x043dacac8b0771dd5b444bcc88f2f8bbdbedd379',
      chainID: 11142220,
      scope: 'self-agent-id',
      userId: human.slice(2).toLowerCase(),
      userDefinedData: 'R4',
      disclosures: { nationality: true, ofac: true, minimumAge: 18 },
    };
    const request = proofRequestFromDeepLink(`https://redirect.self.xyz?selfApp=${encodeURIComponent(JSON.stringify(selfApp))}`);
    expect(request).toMatchObject({
      registry: '0x043DaCac8b0771DD5b444bCC88f2f8BBDBEdd379',
      chainId: 11142220,
      userId: human,
      userDefinedData: 'R4',
      disclosures: { minimumAge: 18, ofac: true, nationality: true, name: false },
    });
  });
});

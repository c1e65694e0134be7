// Which disclosed credentials a refresh asks for again and which it names as replaced (core/credentials.ts): the
// registry keeps only the newest proof's credentials, so whatever a proof is not asked for is erased.
import { describe, expect, it } from 'vitest';
import { credentialsDroppedBy, disclosuresKeeping, type PublicCredentials } from '../../src/core/credentials.js';

const base: PublicCredentials = { olderThan: 18, ofac: [true, true, true], expiryDate: '01-01-35' };

describe('refresh credentials', () => {
  it('asks again for the nationality and name shown, and then drops nothing', () => {
    const shown: PublicCredentials = { ...base, nationality: 'GBR', name: ['ALICE', 'SMITH'] };
    expect(disclosuresKeeping(shown)).toEqual({ nationality: true, name: true });
    expect(credentialsDroppedBy(shown, disclosuresKeeping(shown))).toEqual([]);
    expect(disclosuresKeeping(base)).toEqual({ nationality: false, name: false });
  });

  it('names what the request leaves out; expiryDate, olderThan and ofac come with every proof of the config', () => {
    const shown: PublicCredentials = { ...base, nationality: 'GBR', name: ['ALICE', 'SMITH'] };
    expect(credentialsDroppedBy(shown, { nationality: false, name: true })).toEqual(['nationality']);
    expect(credentialsDroppedBy(shown, { nationality: false, name: false })).toEqual(['nationality', 'name']);
    expect(credentialsDroppedBy(base, { nationality: true, name: true })).toEqual([]);
  });

  it('names credentials a session cannot ask for (disclosed to another verifier), even when keeping the rest', () => {
    const shown: PublicCredentials = { ...base, nationality: 'DEU', issuingState: 'DEU', dateOfBirth: '01-01-95', gender: 'F' };
    expect(credentialsDroppedBy(shown, disclosuresKeeping(shown))).toEqual(['issuingState', 'dateOfBirth', 'gender']);
  });
});

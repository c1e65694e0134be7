// An Ed25519 agent key as a JSON Web Key (RFC 8037), and its RFC 7638 thumbprint: the `keyid` of the agent's Web
// Bot Auth signatures and the `kid` of its key in a signatures directory. The thumbprint is jose's.
import { calculateJwkThumbprint } from 'jose';
import { type Ed25519PublicKey, ed25519PublicKeyBytes } from './ed25519-key.js';

/** The public JWK of an Ed25519 key: the members RFC 7638 hashes, no more. */
export interface Ed25519PublicJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  /** The raw 32-byte key, base64url without padding. */
  x: string;
}

export const ed25519PublicJwk = (publicKey: Ed25519PublicKey): Ed25519PublicJwk => ({
  kty: 'OKP',
  crv: 'Ed25519',
  x: Buffer.from(ed25519PublicKeyBytes(publicKey)).toString('base64url'),
});

/** The base64url SHA-256 JWK thumbprint of the key (43 characters). */
export const ed25519JwkThumbprint = (publicKey: Ed25519PublicKey): Promise<string> => calculateJwkThumbprint(ed25519PublicJwk(publicKey), 'sha256');

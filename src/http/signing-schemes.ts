// How an agent signs a request to this service, in words an agent or its developer reads: the demo endpoints'
// descriptions, the discovery document's signing schemes and llms.txt all show this one text.
import { KEY_DIRECTORY_TEMPLATE } from '../core/key-directory.js';
import { AGENT_HEADERS } from '../core/signed-request.js';

/** A signed request's headers and how to make them (the demo endpoints' `authentication`). */
export const SIGNED_REQUEST_AUTHENTICATION = {
  required: true,
  protocol: 'Signed agent request',
  requiredHeaders: {
    [AGENT_HEADERS.signature]: 'personal_sign (secp256k1) or Ed25519 signature of the request message, 0x-hex',
    [AGENT_HEADERS.timestamp]: 'unix milliseconds, decimal digits, within 5 minutes of the server clock',
  },
  optionalHeaders: {
    [AGENT_HEADERS.address]: 'the signer address (informational)',
    [AGENT_HEADERS.keyType]: 'ed25519 for Ed25519 agents',
    [AGENT_HEADERS.key]: 'Ed25519 agents: the raw 32-byte public key, 0x-hex',
  },
  howToSign:
    'message = keccak256(timestamp + METHOD + path?query + keccak256(body) as 0x-hex text); secp256k1 agents personal_sign its 32 bytes ' +
    '(canonical form only: low s, v 27 or 28, as viem/ethers signMessage produce), Ed25519 agents sign the 32 bytes. ' +
    'Each signed message is accepted once across the whole service. The client SDK (signRequest, a signing fetch) does this.',
  alternative: {
    protocol: 'RFC 9421 HTTP Message Signatures (Signature-Input, Signature; Content-Digest with a body)',
    coveredComponents: '@method, @authority, @path, @query, content-digest (with a body), signature-agent (when sent)',
    parameters: 'created, expires (at most 5 minutes after created), nonce (used once), keyid',
    secp256k1: 'ERC-8128: keyid="erc8128:<chainId>:<address>", an EIP-191 signature of the signature base',
    ed25519: `Web Bot Auth: alg="ed25519", tag="web-bot-auth", keyid = the JWK thumbprint, Signature-Agent = ${KEY_DIRECTORY_TEMPLATE}`,
    sdk: "signRequest(signer, request, { scheme: 'rfc9421' }) or signingFetch(signer, fetch, { scheme: 'rfc9421' })",
  },
};

/** One way to sign a request, as discovery lists it. */
export interface SigningScheme {
  id: 'x-svc-agent' | 'erc8128' | 'web-bot-auth';
  protocol: string;
  keyTypes: ('secp256k1' | 'ed25519')[];
  headers: string[];
  howToSign: string;
}

const { alternative } = SIGNED_REQUEST_AUTHENTICATION;
const RFC9421_HEADERS = ['Signature-Input', 'Signature', 'Content-Digest (with a body)'];
const rfc9421HowTo = (keyid: string): string =>
  `Cover ${alternative.coveredComponents}; parameters ${alternative.parameters}. ${keyid}. SDK: ${alternative.sdk}.`;

/** The three schemes every signed endpoint (and the A2A verify intent) accepts. */
export const SIGNING_SCHEMES: readonly SigningScheme[] = [
  {
    id: 'x-svc-agent',
    protocol: SIGNED_REQUEST_AUTHENTICATION.protocol,
    keyTypes: ['secp256k1', 'ed25519'],
    headers: [...Object.keys(SIGNED_REQUEST_AUTHENTICATION.requiredHeaders), ...Object.keys(SIGNED_REQUEST_AUTHENTICATION.optionalHeaders)],
    howToSign: SIGNED_REQUEST_AUTHENTICATION.howToSign,
  },
  {
    id: 'erc8128',
    protocol: alternative.protocol,
    keyTypes: ['secp256k1'],
    headers: RFC9421_HEADERS,
    howToSign: rfc9421HowTo(alternative.secp256k1),
  },
  {
    id: 'web-bot-auth',
    protocol: alternative.protocol,
    keyTypes: ['ed25519'],
    headers: [...RFC9421_HEADERS, 'Signature-Agent'],
    howToSign: rfc9421HowTo(alternative.ed25519),
  },
];

// What an A2A caller asks for, read from its message parts: a data part `{intent, network | chainId, agentId, ...}`,
// JSON written inside a text part, or plain English with keywords ("verify agent 5 on testnet"). Pure: no I/O.
// Every intent uses mainnet unless `network` or `chainId` names testnet; a network the service does not serve
// (chainId 1) is refused, never read as mainnet. A request may come in several turns: what the earlier messages of
// a task gave (GatheredInput, kept in the task) is completed by the next one.
import type { Message } from '@a2a-js/sdk';
import { ServiceError } from '../core/errors.js';
import { DEFAULT_NETWORK, type NetworkName, requestedNetwork } from '../core/networks.js';
import { MODE_ALIASES, REGISTRATION_MODES } from '../core/registration-modes.js';
import type { SignedRequest } from '../services/signed-requests.js';
import type { SessionOpening } from '../sessions/sessions.js';

export const INTENTS = ['register', 'status', 'lookup', 'verify', 'deregister', 'freshness', 'help'] as const;
export type Intent = (typeof INTENTS)[number];

/** A message part as the executor hands it over: structured data or text. */
export type InputPart = { kind: 'data'; data: Record<string, unknown> } | { kind: 'text'; text: string };

/** The caller's parts as the intent parser reads them (files and URLs are ignored). */
export function inputParts(message: Message | undefined): InputPart[] {
  const parts: InputPart[] = [];
  for (const part of message?.parts ?? []) {
    const content = part.content;
    if (content?.$case === 'text') parts.push({ kind: 'text', text: content.value });
    else if (content?.$case === 'data' && content.value && typeof content.value === 'object' && !Array.isArray(content.value)) {
      parts.push({ kind: 'data', data: content.value as Record<string, unknown> });
    }
  }
  return parts;
}

export interface IntentRequest {
  intent: Intent;
  network: NetworkName;
  agentId?: bigint;
  sessionToken?: string;
  /** register / deregister: the session to open, from the fields the caller sent. */
  opening?: SessionOpening;
  /** verify: a signed agent request to check ({headers, method, url, body}), instead of an agent id. */
  signedRequest?: SignedRequest;
  /** Every field the caller sent (data part or JSON text). */
  fields: Record<string, unknown>;
}

/** What the turns of a conversation gave so far: the intent once named, and the request fields sent. */
export interface GatheredInput {
  intent?: Intent;
  fields: Record<string, unknown>;
}

export type ParsedIntent =
  | { ok: true; request: IntentRequest }
  | { ok: false; intent?: Intent; missing: string[]; message: string; gathered: GatheredInput };

/** The request fields any intent reads; only these are carried from one turn to the next. */
const FIELD_NAMES = [
  'network',
  'chainId',
  'agentId',
  'agent_id',
  'id',
  'sessionToken',
  'token',
  'signedRequest',
  'policy',
  'mode',
  'humanAddress',
  'address',
  'agentAddress',
  'agentSignature',
  'guardianSignature',
  'ed25519Pubkey',
  'ed25519Signature',
  'disclosures',
] as const;

/** The request fields among `fields` (the rest of a data part is not kept). */
export function requestFields(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(FIELD_NAMES.filter((name) => fields[name] !== undefined && fields[name] !== null).map((name) => [name, fields[name]]));
}

/** The fields each intent cannot do without. */
const REQUIRED: Record<Intent, readonly ('agentId' | 'sessionToken' | 'mode')[]> = {
  register: ['mode'],
  status: ['sessionToken'],
  lookup: ['agentId'],
  verify: ['agentId'],
  deregister: [],
  freshness: ['agentId'],
  help: [],
};

const isIntent = (value: unknown): value is Intent => typeof value === 'string' && (INTENTS as readonly string[]).includes(value);

/**
 * Mainnet unless `network` (a name or alias) or `chainId` names testnet. A network the service does not serve, or a
 * name and a chain id that disagree, is a ServiceError (400) naming the field: never taken for mainnet.
 */
export function networkOf(fields: Record<string, unknown>): NetworkName {
  return requestedNetwork(fields['network'], fields['chainId']) ?? DEFAULT_NETWORK;
}

function agentIdOf(value: unknown): bigint | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  if (typeof value === 'string' && /^\d{1,78}$/.test(value.trim())) return BigInt(value.trim());
  if (typeof value === 'bigint' && value >= 0n) return value;
  return undefined;
}

/** Keywords of plain-text requests, checked in this order (the first match wins). */
const KEYWORDS: [Intent, RegExp][] = [
  ['help', /\b(help|what can you do|capabilities|intents)\b/],
  ['deregister', /\b(deregister|unregister|remove|revoke|burn)\b/],
  ['register', /\b(register|enrol|enroll|sign ?up)\b/],
  ['freshness', /\b(fresh|freshness|expire[sd]?|expiry|stale)\b/],
  ['status', /\b(status|session|progress)\b/],
  ['verify', /\b(verify|verified|verification|human|backed|check)\b/],
  ['lookup', /\b(look ?up|info|details|who is|show|find|get)\b/],
];

/** Registration modes and their aliases named in plain English, longest first ("ed25519-linked" before "ed25519"). */
const MODE_WORDS = new RegExp(
  `(?<![\\w-])(${[...REGISTRATION_MODES, ...Object.keys(MODE_ALIASES)].sort((a, b) => b.length - a.length).join('|')})(?![\\w-])`,
);

/** Fields written in plain English: "agent 5", "#5" or a bare "5", "on testnet", "chain 11142220", a mode, a session token. */
function textFields(text: string): { intent?: Intent; fields: Record<string, unknown> } {
  const lower = text.toLowerCase();
  const fields: Record<string, unknown> = {};
  const intent = KEYWORDS.find(([, re]) => re.test(lower))?.[0];
  // a bare number answers "which agent?"
  const id = /\bagent\s*(?:id\s*)?#?\s*(\d+)\b/.exec(lower) ?? /#(\d+)\b/.exec(lower) ?? /^\s*(\d+)\s*$/.exec(lower);
  if (id) fields['agentId'] = id[1];
  const mode = MODE_WORDS.exec(lower);
  if (mode) fields['mode'] = mode[1];
  if (/\b(testnet|sepolia|alfajores)\b/.test(lower)) fields['network'] = 'testnet';
  const chain = /\bchain\s*(?:id\s*)?(\d+)\b/.exec(lower);
  if (chain) fields['chainId'] = chain[1];
  const token = /\b(?:token|sessiontoken)\s*[:=]?\s*([A-Za-z0-9_\-.~]{20,})/i.exec(text);
  if (token) fields['sessionToken'] = token[1];
  const address = /\b0x[0-9a-fA-F]{40}\b/.exec(text);
  if (address) fields['address'] = address[0];
  return { ...(intent ? { intent } : {}), fields };
}

/** What a person says to end a conversation rather than answer its question: the whole text, nothing asked in it. */
const CLOSING_WORDS =
  /^(?:done|complete|completed|finish(?:ed)?|that'?s (?:all|it)|nothing(?: else)?|no,? thanks?(?: you)?|never ?mind|cancel|stop|quit|exit|bye|goodbye)[\s.!]*$/i;

/** True when the parts only say the conversation is over ("done", "never mind"): text alone, a closing phrase each. */
export function closesConversation(parts: readonly InputPart[]): boolean {
  return parts.length > 0 && parts.every((part) => part.kind === 'text' && CLOSING_WORDS.test(part.text.trim()));
}

/** A JSON object written inside a text part, or undefined. */
function jsonObjectIn(text: string): Record<string, unknown> | undefined {
  const trimmed = text.trim();
  const start = trimmed.indexOf('{');
  const end = trimmed.lastIndexOf('}');
  if (start < 0 || end <= start) return undefined;
  try {
    const parsed: unknown = JSON.parse(trimmed.slice(start, end + 1));
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const EXAMPLES = 'e.g. {"intent": "verify", "agentId": 5, "network": "testnet"} or "verify agent 5 on testnet"; say "help" for the list';

/**
 * The request in the parts: data parts first, then JSON in text, then keywords in text. `before` is what earlier
 * turns of the same task gave: the parts complete it (an intent they name replaces it, a field they send
 * overrides it).
 */
export function parseIntent(parts: readonly InputPart[], before?: GatheredInput): ParsedIntent {
  let fields: Record<string, unknown> = {};
  let intent: Intent | undefined;
  let unknownIntent: string | undefined;
  const take = (source: Record<string, unknown>) => {
    fields = { ...source, ...fields };
    const named = source['intent'] ?? source['skill'] ?? source['action'];
    if (intent === undefined && isIntent(typeof named === 'string' ? named.toLowerCase() : named)) intent = (named as string).toLowerCase() as Intent;
    else if (intent === undefined && named !== undefined && unknownIntent === undefined) unknownIntent = String(named);
  };
  for (const part of parts) if (part.kind === 'data') take(part.data);
  for (const part of parts) {
    if (part.kind !== 'text') continue;
    const json = jsonObjectIn(part.text);
    if (json) take(json);
  }
  for (const part of parts) {
    if (part.kind !== 'text' || jsonObjectIn(part.text)) continue;
    const found = textFields(part.text);
    fields = { ...found.fields, ...fields };
    if (intent === undefined && found.intent) intent = found.intent;
  }

  if (before) {
    const earlier = requestFields(before.fields);
    // a network named now replaces the one named before, whichever field names either
    if (fields['network'] !== undefined || fields['chainId'] !== undefined) {
      delete earlier['network'];
      delete earlier['chainId'];
    }
    fields = { ...earlier, ...fields };
    // an intent named now, even an unknown one, replaces the earlier one
    if (intent === undefined && unknownIntent === undefined) intent = before.intent;
  }
  const gathered = (): GatheredInput => ({ ...(intent ? { intent } : {}), fields: requestFields(fields) });

  if (intent === undefined) {
    const message =
      unknownIntent !== undefined
        ? `Unknown intent ${JSON.stringify(unknownIntent)}: use one of ${INTENTS.join(', ')} (${EXAMPLES})`
        : `Missing intent: say what you want, one of ${INTENTS.join(', ')} (${EXAMPLES})`;
    return { ok: false, missing: ['intent'], message, gathered: gathered() };
  }

  let network: NetworkName;
  try {
    network = networkOf(fields);
  } catch (error) {
    if (!(error instanceof ServiceError)) throw error;
    // a value refused, as the services refuse one: the next turn names the network again
    const { network: _refused, chainId: _refusedId, ...kept } = requestFields(fields);
    return { ok: false, intent, missing: [], message: error.message, gathered: { intent, fields: kept } };
  }

  const agentId = agentIdOf(fields['agentId'] ?? fields['agent_id'] ?? fields['id']);
  const tokenField = fields['sessionToken'] ?? fields['token'];
  const sessionToken = typeof tokenField === 'string' && tokenField.trim() !== '' ? tokenField.trim() : undefined;
  const signedRequest = intent === 'verify' ? signedRequestOf(fields['signedRequest']) : undefined;
  const present = {
    // verify checks either an agent by id or the agent behind a signed request
    agentId: agentId !== undefined || signedRequest !== undefined,
    sessionToken: sessionToken !== undefined,
    mode: typeof fields['mode'] === 'string',
  };
  const missing = REQUIRED[intent].filter((name) => !present[name]);
  if (missing.includes('mode')) {
    const message = `The register intent needs mode, one of ${REGISTRATION_MODES.join(', ')}: e.g. {"intent": "register", "mode": "wallet-free", "network": "testnet"}`;
    return { ok: false, intent, missing, message, gathered: gathered() };
  }
  if (missing.length > 0) {
    const what = missing.map((name) => (name === 'agentId' ? 'agentId (a non-negative integer)' : 'sessionToken')).join(' and ');
    return { ok: false, intent, missing, message: `The ${intent} intent needs ${what}: ${EXAMPLES}`, gathered: gathered() };
  }
  const opening = openingOf(intent, fields, network);
  return {
    ok: true,
    request: {
      intent,
      network,
      ...(agentId !== undefined ? { agentId } : {}),
      ...(sessionToken !== undefined ? { sessionToken } : {}),
      ...(opening ? { opening } : {}),
      ...(signedRequest ? { signedRequest } : {}),
      fields,
    },
  };
}

/** A signed request carried in a data part: {headers: {x-svc-agent-*...}, method, url, body?}; undefined if malformed. */
function signedRequestOf(value: unknown): SignedRequest | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { headers, method, url, body } = value as Record<string, unknown>;
  if (typeof headers !== 'object' || headers === null || typeof method !== 'string' || typeof url !== 'string') return undefined;
  const lowercase = Object.fromEntries(
    Object.entries(headers as Record<string, unknown>)
      .filter((entry): entry is [string, string] => typeof entry[1] === 'string')
      .map(([name, text]) => [name.toLowerCase(), text]),
  );
  return { headers: lowercase, method, url, body: typeof body === 'string' ? body : '' };
}

/** The register or deregister request in the caller's fields, as POST /api/agent/{register,deregister} takes it. */
function openingOf(intent: Intent, fields: Record<string, unknown>, network: NetworkName): SessionOpening | undefined {
  const text = (name: string) => (typeof fields[name] === 'string' ? (fields[name] as string) : undefined);
  const optional = (key: string, value: string | undefined) => (value === undefined ? {} : { [key]: value });
  const disclosures = fields['disclosures'] && typeof fields['disclosures'] === 'object' ? { disclosures: fields['disclosures'] as object } : {};
  if (intent === 'register') {
    return {
      kind: 'register',
      request: {
        mode: text('mode') as string,
        network,
        ...optional('humanAddress', text('humanAddress') ?? text('address')),
        ...optional('agentAddress', text('agentAddress')),
        ...optional('agentSignature', text('agentSignature')),
        ...optional('guardianSignature', text('guardianSignature')),
        ...optional('ed25519Pubkey', text('ed25519Pubkey')),
        ...optional('ed25519Signature', text('ed25519Signature')),
        ...disclosures,
      },
    };
  }
  if (intent === 'deregister') {
    return { kind: 'deregister', request: { network, ...optional('agentAddress', text('agentAddress') ?? text('address')), ...disclosures } };
  }
  return undefined;
}

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

/** What the registry holds for an agent without credentials (none disclosed, or no agent at all). */
export const EMPTY_CREDENTIALS: AgentCredentials = Object.freeze<AgentCredentials>({
  issuingState: '',
  name: [],
  idNumber: '',
  nationality: '',
  dateOfBirth: '',
  gender: '',
  expiryDate: '',
  olderThan: 0n,
  ofac: [false, false, false],
});

/** Credentials as the API shows them: what the human disclosed, nothing for what they did not. */
export interface PublicCredentials {
  nationality?: string;
  issuingState?: string;
  name?: string[];
  dateOfBirth?: string;
  gender?: string;
  expiryDate?: string;
  /** The age threshold proved (0 when none was asked). */
  olderThan: number;
  /** OFAC checks passed: [document number, name + date of birth, name + year of birth]. */
  ofac: [boolean, boolean, boolean];
}

/** Credentials as the public queries show them: nationality, olderThan and ofac always present. */
export type InterfaceCredentials = PublicCredentials & { nationality: string };

// Undisclosed fields come out of the circuit as empty or NUL-filled strings.
const disclosed = (value: string): string | undefined => {
  const trimmed = value.replace(/\0/g, '').trim();
  return trimmed === '' ? undefined : trimmed;
};

export function publicCredentials(credentials: AgentCredentials): PublicCredentials {
  const name = credentials.name.map((part) => disclosed(part)).filter((part): part is string => part !== undefined);
  const fields: Record<string, string | undefined> = {
    nationality: disclosed(credentials.nationality),
    issuingState: disclosed(credentials.issuingState),
    dateOfBirth: disclosed(credentials.dateOfBirth),
    gender: disclosed(credentials.gender),
    expiryDate: disclosed(credentials.expiryDate),
  };
  return {
    ...Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)),
    ...(name.length > 0 ? { name } : {}),
    olderThan: Number(credentials.olderThan),
    ofac: [credentials.ofac[0], credentials.ofac[1], credentials.ofac[2]],
  };
}

/**
 * The credentials a human chooses to disclose, as the public answers name them. Not among them: expiryDate
 * (the identity app reveals it with every proof, as the registry caps the proof's expiry by it) and olderThan
 * and ofac (the agent's config fixes them, and a refresh proves the same config).
 */
export const DISCLOSED_CREDENTIALS = ['nationality', 'name', 'issuingState', 'dateOfBirth', 'gender'] as const;
export type DisclosedCredential = (typeof DISCLOSED_CREDENTIALS)[number];

/** The disclosure flags a session can set; the interface's disclosures have none for issuingState, dateOfBirth, gender. */
type AskableFlags = { nationality: boolean; name: boolean };

/** The flags that ask again for every credential `shown` has that a session can ask for. */
export function disclosuresKeeping(shown: PublicCredentials): AskableFlags {
  return { nationality: shown.nationality !== undefined, name: shown.name !== undefined };
}

/**
 * What `shown` has that a proof asked for `asked` will not disclose. The registry stores the newest proof's
 * credentials in place of the old ones, so these are erased when that proof lands.
 */
export function credentialsDroppedBy(shown: PublicCredentials, asked: AskableFlags): DisclosedCredential[] {
  const askedFor = (credential: DisclosedCredential): boolean => (credential === 'nationality' || credential === 'name') && asked[credential];
  return DISCLOSED_CREDENTIALS.filter((credential) => shown[credential] !== undefined && !askedFor(credential));
}

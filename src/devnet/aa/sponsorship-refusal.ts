// How the local paymaster refuses: a JSON-RPC error with code -32001 whose message starts with the rule that
// refused ("Sponsorship refused: client budget: …") and whose data names it again for programs ({"rule": …}).
import { AaRpcError, RpcErrorCode } from './json-rpc.js';

export type SponsorshipRule =
  | 'operation cap'
  | 'sender limit'
  | 'factory'
  | 'account kind'
  | 'allowed calls'
  | 'token budget'
  | 'client budget'
  | 'global budget';

export const sponsorshipRefused = (rule: SponsorshipRule, message: string): AaRpcError =>
  new AaRpcError(RpcErrorCode.sponsorshipRefused, `Sponsorship refused: ${rule}: ${message}`, { rule });

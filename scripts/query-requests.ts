// The measured queries of the query benchmark and profile, for one agent on the local test chain.

export const CHAIN_ID = 11142220;

/** The paths and request bodies of the measured queries for `agentId`. */
export function queryRequests(agentId: bigint | number) {
  return {
    verify: `/api/agent/verify/${CHAIN_ID}/${agentId}`,
    info: `/api/agent/info/${CHAIN_ID}/${agentId}`,
    /** A2A v0.3 message/send with the verify intent as a data part: the A2A twin of the REST verify. */
    a2aVerify: {
      path: '/api/a2a',
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: {
          message: {
            kind: 'message',
            messageId: 'bench-verify',
            role: 'user',
            parts: [{ kind: 'data', data: { intent: 'verify', agentId: Number(agentId), chainId: CHAIN_ID } }],
          },
        },
      }),
    },
  };
}

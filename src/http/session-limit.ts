/** Session creations per client address and minute (register, deregister, identify, refresh, challenges; REST and A2A alike). */
export const SESSION_CREATION_LIMIT = 10;

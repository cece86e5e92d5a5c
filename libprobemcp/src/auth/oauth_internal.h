/* SPDX-License-Identifier: MIT */
/* Internal to the OAuth state (oauth_state.c, oauth_token.c). */
#ifndef PMCP_AUTH_OAUTH_INTERNAL_H
#define PMCP_AUTH_OAUTH_INTERNAL_H

/* A random identifier (24 base64url chars) for rows and nonces. 0 or
 * PMCP_EINTERNAL / PMCP_ENOMEM. */
int pmcp__oauth_random_id(char out[33]);

#endif

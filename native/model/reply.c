/*
 * reply.c - the two shapes of a control command's reply (README.md, "Control
 * protocol"): {"ok":true}, or {"ok":false,"error":"..."} with the message
 * escaped for JSON.  Every file with commands answers through these.
 */
#include <stdio.h>

#include "model.h"

int reply_fail(char *reply, size_t n, const char *msg, const char *arg)
{
	char m[256];
	snprintf(m, sizeof m, "%s%s%s", msg, arg ? ": " : "", arg ? arg : "");
	int o = snprintf(reply, n, "{\"ok\":false,\"error\":\"");
	for (char *c = m; *c && o < (int)n - 8; c++) {       /* JSON string escape */
		if (*c == '"' || *c == '\\')
			reply[o++] = '\\';
		reply[o++] = (unsigned char)*c < 0x20 ? '?' : *c;
	}
	snprintf(reply + o, n - o, "\"}");
	return -1;
}

int reply_ok(char *reply, size_t n)
{
	snprintf(reply, n, "{\"ok\":true}");
	return 0;
}

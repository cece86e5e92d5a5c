/* SPDX-License-Identifier: MIT */
/* The curves App: one fixed resource whose text is the page gen_app.py
 * built from app/curves.html (with its own strict CSP), and the tool
 * _meta that points hosts at it. */
#include "research/app.h"

#include <stddef.h>

extern const char pmcp__app_curves_html[];
extern const size_t pmcp__app_curves_html_len;

/* The page loads nothing from anywhere (every list empty): a host builds
 * its sandbox's CSP from these, and the page's own meta CSP allows only
 * its inline script and style by digest. */
static const char resource_meta[] =
  "{\"ui\":{\"csp\":{\"connectDomains\":[],\"resourceDomains\":[],\"frameDomains\":[],"
  "\"baseUriDomains\":[]},\"prefersBorder\":true}}";
static const char tool_meta[] = "{\"ui\":{\"resourceUri\":\"" PMCP__APP_CURVES_URI "\"}}";

static int read_curves(pmcp_call *call, void *ud)
{
  (void)ud;
  return pmcp_result_resource_text(call, pmcp_call_uri(call), PMCP_MIME_MCP_APP,
                                   pmcp__app_curves_html);
}

int pmcp__app_curves_attach(pmcp_server *server, const char *tool)
{
  pmcp_resource_def d = PMCP_RESOURCE_DEF_INIT;
  d.uri = PMCP__APP_CURVES_URI;
  d.name = "curves";
  d.title = "Metric curves";
  d.description = "Interactive curves of a metrics series or fetch_float_series result "
                  "(MCP App): hover values, toggle series, zoom a step range, log y";
  d.mime_type = PMCP_MIME_MCP_APP;
  d.read = read_curves;
  int rc = pmcp_server_add_resource(server, &d);
  if (rc == 0)
    rc = pmcp_server_set_resource_meta(server, PMCP__APP_CURVES_URI, resource_meta);
  else if (rc == PMCP_EEXIST)
    rc = 0; /* the other toolset registered it */
  return rc ? rc : pmcp_server_set_tool_meta(server, tool, tool_meta);
}

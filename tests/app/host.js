// SPDX-License-Identifier: MIT
// The host side of MCP Apps, as a web host does it: the view (the ui://
// resource's HTML) in a sandboxed frame of its own opaque origin, with the
// CSP built from the resource's _meta.ui.csp (as the spec constructs it),
// talking to this page through @modelcontextprotocol/ext-apps' AppBridge.
// Tool calls the view makes go to the test (window.pmcpCallTool, exposed by
// playwright), which forwards them to probe-mcp-stdio.
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';

function policy(csp) {
  const list = (a) => (a && a.length ? ' ' + a.join(' ') : '');
  const res = list(csp && csp.resourceDomains);
  return [
    "default-src 'none'",
    `script-src 'self' 'unsafe-inline'${res}`,
    `style-src 'self' 'unsafe-inline'${res}`,
    `connect-src 'self'${list(csp && csp.connectDomains)}`,
    `img-src 'self' data:${res}`,
    `font-src 'self'${res}`,
    `media-src 'self' data:${res}`,
    `frame-src ${csp && csp.frameDomains && csp.frameDomains.length ? csp.frameDomains.join(' ') : "'none'"}`,
    "object-src 'none'",
    `base-uri ${csp && csp.baseUriDomains && csp.baseUriDomains.length ? csp.baseUriDomains.join(' ') : "'self'"}`,
  ].join('; ');
}

window.hostLog = [];
window.startView = async function ({ html, meta, tool, args, result }) {
  const frame = document.createElement('iframe');
  frame.setAttribute('sandbox', 'allow-scripts');
  frame.title = 'MCP App';
  document.body.appendChild(frame);
  const bridge = new AppBridge(null, { name: 'probe-mcp-test-host', version: '1.0.0' },
    { serverTools: {}, logging: {} },
    { hostContext: { theme: 'light', displayMode: 'inline', platform: 'web',
                     toolInfo: { tool }, containerDimensions: { width: 760, maxHeight: 900 } } });
  bridge.oncalltool = async (params) => {
    window.hostLog.push({ method: 'tools/call', params });
    return await window.pmcpCallTool(params);
  };
  bridge.onsizechange = ({ height }) => {
    if (height) frame.style.height = Math.min(900, height) + 'px';
  };
  bridge.onloggingmessage = (p) => window.hostLog.push({ method: 'notifications/message', params: p });
  const initialized = new Promise((resolve) => { bridge.oninitialized = resolve; });
  // The frame's window is the same object before and after its document
  // loads: connect first, so the view's ui/initialize finds the bridge.
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  const cspMeta = `<meta http-equiv="Content-Security-Policy" content="${policy(meta && meta.ui && meta.ui.csp)}">`;
  frame.srcdoc = html.replace(/<head>/i, '<head>' + cspMeta);
  await initialized;
  window.hostLog.push({ method: 'ui/notifications/initialized', app: bridge.getAppVersion() });
  await bridge.sendToolInput({ arguments: args });
  await bridge.sendToolResult(result);
  window.bridge = bridge;
  return bridge.getAppVersion();
};

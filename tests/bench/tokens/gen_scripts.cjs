#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// Deterministic per-script inputs of the tokenizer benchmark (run.cjs):
// English prose, source code, CJK (Chinese and Japanese), emoji-heavy chat
// text. Each is about TARGET bytes of valid UTF-8 from a fixed seed.
//   node gen_scripts.cjs KIND TARGET_BYTES OUT    (KIND: prose|code|cjk|emoji)
'use strict';
const fs = require('fs');
const { makeRng } = require('./prng.cjs');

const [, , KIND, TARGET_S, OUT] = process.argv;
const TARGET = +(TARGET_S || 2_000_000);
const rng = makeRng({ prose: 101, code: 202, cjk: 303, emoji: 404 }[KIND] || 1);
const { int, pick, chance } = rng;

// Zipf-ish pick: earlier entries more frequent
function zipf(arr) {
  const cum = []; let s = 0;
  for (let i = 0; i < arr.length; i++) { s += 1 / Math.pow(i + 2, 0.95); cum.push(s); }
  return () => { const x = rng.r() * s; let lo = 0, hi = cum.length - 1; while (lo < hi) { const m = (lo + hi) >> 1; if (cum[m] < x) lo = m + 1; else hi = m; } return arr[lo]; };
}

const EN = zipf(('the of and to a in is that for it was on with as be by are this at from or have an not they which but ' +
  'you were her all she there would their we him been has when who will more no if out so said what up its about into than ' +
  'them can only other new some could time these two may then do first any my now such like our over man me even most made ' +
  'after also did many before must through back years where much your way well down should because each just those people ' +
  'how too little state good very make world still own see men work long get here between both life being under never day ' +
  'however important different following number public several part around general system business information government ' +
  'company report data model training results performance research support value development group example market power ' +
  'policy social question history water experience member study increase evaluation dataset accuracy baseline learning ' +
  'analysis approach method significant observed suggests compared higher lower early later city country family school ' +
  'student children house morning evening quickly slowly carefully simply clearly rather almost often always sometimes ' +
  'mountain river forest weather journey kitchen garden window letter village harvest festival ceremony architecture ' +
  'photograph neighbourhood responsibility understanding extraordinary nevertheless throughout philosophy literature').split(' '));
const CAP = (w) => w[0].toUpperCase() + w.slice(1);
function enSentence() {
  const n = int(6, 24); const w = [];
  for (let i = 0; i < n; i++) {
    let x = EN();
    if (chance(0.04)) x = CAP(x);
    if (chance(0.02)) x = String(int(1, 2030));
    if (chance(0.02)) x += pick(["'s", "n't", "'ll", "'re"]);
    w.push(x);
    if (i < n - 1 && chance(0.08)) w[w.length - 1] += pick([',', ',', ';', ' -', ':']);
  }
  w[0] = CAP(w[0]);
  return w.join(' ') + pick(['.', '.', '.', '?', '!']);
}
function prose() {
  const p = [];
  for (let i = 0, n = int(2, 7); i < n; i++) p.push(enSentence());
  let s = p.join(' ');
  if (chance(0.1)) s = '## ' + CAP(EN()) + ' ' + EN() + '\n\n' + s;
  if (chance(0.1)) s += '\n\n' + Array.from({ length: int(2, 5) }, () => '- ' + enSentence()).join('\n');
  return s + '\n\n';
}

const SYL = ['ab', 'al', 'an', 'ar', 'ba', 'be', 'co', 'con', 'da', 'de', 'di', 'en', 'er', 'ex', 'fi', 'ga', 'in', 'is',
  'la', 'le', 'li', 'lo', 'ma', 'me', 'mi', 'na', 'ne', 'no', 'or', 'pa', 'pe', 'pro', 're', 'ri', 'sa', 'se', 'st', 'ta',
  'te', 'ti', 'to', 'tra', 'un', 've', 'vi'];
const ident = () => Array.from({ length: int(1, 3) }, () => pick(SYL)).join('') + (chance(0.3) ? '_' + pick(SYL) + pick(SYL) : '');
function code() {
  const f = ident(), a = ident(), b = ident(), t = pick(['int', 'size_t', 'double', 'const char *', 'uint32_t']);
  if (chance(0.5)) {
    return `/* ${enSentence()} */\nstatic ${t} ${f}(${t} ${a}, size_t ${b})\n{\n  if (${a} == NULL || ${b} > ${int(1, 4096)})\n` +
      `    return -${int(1, 40)};\n  for (size_t i = 0; i < ${b}; i++) {\n    ${a}[i] = (${a}[i] << ${int(1, 7)}) ^ 0x${rng.hex(8)}u;\n` +
      `    if (${a}[i] % ${int(2, 97)} == 0)\n      ${ident()}(&${a}[i], "${ident()}: %zu\\n", i);\n  }\n  return 0;\n}\n\n`;
  }
  return `def ${f}(${a}, ${b}=None, *, ${ident()}=${int(0, 100)}):\n    """${enSentence()}"""\n    result = []\n` +
    `    for ${ident()} in range(len(${a})):\n        if ${b} is not None and ${a}[${int(0, 9)}] > ${rng.float(0, 10, 3)}:\n` +
    `            result.append({"${ident()}": ${a}, "${ident()}": ${b}})\n    return sorted(result, key=lambda x: x["${ident()}"])\n\n`;
}

// Chinese and Japanese: common words (1-4 characters), full-width punctuation
const ZH = zipf(('的 是 不 了 在 人 有 我 他 这 中 大 来 上 国 个 到 说 们 为 子 和 你 地 出 道 也 时 年 得 就 那 要 下 以 生 会 自 着 去 之 过 ' +
  '家 学 对 可 她 里 后 小 么 心 多 天 而 能 好 都 然 没 日 于 起 还 发 成 事 只 作 当 想 看 文 无 开 手 十 用 主 行 方 又 如 前 所 本 见 经 ' +
  '我们 他们 中国 时候 没有 什么 自己 一个 知道 现在 可以 这个 问题 工作 发展 社会 经济 研究 技术 数据 模型 训练 结果 性能 ' +
  '政府 国家 世界 历史 文化 教育 科学 学生 老师 北京 上海 大学 公司 市场 城市 生活 环境 时间 语言 计算机 人工智能 机器学习 ' +
  '深度学习 自然语言处理 实验 评估 准确率 基准 方法 分析 显著 观察 比较 提高 降低 早期 后来').split(' '));
const JA = zipf(('の に は を た が で て と し れ さ ある いる も する から な こと として い や れる など なっ ない この ため その あっ よう ' +
  'また もの という あり まで られ なる へ か だ これ によって により おり より による ず なり られる において ば なかっ なく しかし ' +
  'について せ だっ その後 できる それ う ので なお のみ でき き つ における および いう さらに でも ら たり その他 に関する たち ます ' +
  '日本 東京 研究 開発 技術 学習 モデル データ 結果 評価 実験 方法 日本語 自然言語処理 ニューラルネットワーク トークナイザー').split(' '));
function cjk() {
  const ja = chance(0.35);
  const n = int(6, 30); let s = '';
  for (let i = 0; i < n; i++) {
    s += ja ? JA() : ZH();
    if (chance(0.03)) s += String(int(1, 2030));
    if (i < n - 1 && chance(0.1)) s += ja ? '、' : pick(['，', '，', '、', '；']);
  }
  if (chance(0.05)) s = '「' + s + '」';
  return s + pick(ja ? ['。', '。', '！', '？'] : ['。', '。', '。', '！', '？']) + (chance(0.15) ? '\n' : '');
}

// emoji-heavy chat: short words mixed with emoji, skin tones, ZWJ
// sequences, flags and variation selectors
const EMO = ['😀', '😂', '🤣', '😍', '🥰', '😎', '🤔', '😭', '😡', '👍', '👎', '👏', '🙏', '💪', '🔥', '✨', '🎉', '❤️', '💔', '💯',
  '🚀', '🌟', '🍕', '☕', '🐶', '🐱', '🌈', '⚡', '✅', '❌', '👀', '🤖', '💻', '📈', '🏆', '🎶', '😴', '🥳', '🤯', '🙌'];
const TONE = ['🏻', '🏼', '🏽', '🏾', '🏿'];
const ZWJ = ['👨‍👩‍👧‍👦', '👩‍💻', '👨‍🔬', '🏳️‍🌈', '❤️‍🔥', '🧑‍🤝‍🧑', '👩‍🚀', '🐻‍❄️'];
const FLAG = ['🇺🇸', '🇯🇵', '🇫🇷', '🇩🇪', '🇧🇷', '🇮🇳', '🇬🇧', '🇨🇦'];
function emoji() {
  const n = int(4, 16); const w = [];
  for (let i = 0; i < n; i++) {
    const r = rng.r();
    if (r < 0.45) w.push(EN());
    else if (r < 0.75) w.push(Array.from({ length: int(1, 4) }, () => pick(EMO)).join(''));
    else if (r < 0.85) w.push(pick(['👍', '👋', '🙏', '💪', '👏']) + pick(TONE));
    else if (r < 0.95) w.push(pick(ZWJ));
    else w.push(pick(FLAG));
  }
  return w.join(chance(0.7) ? ' ' : '') + pick(['', '!', '!!', '?', ' 😂😂😂']) + '\n';
}

const gen = { prose, code, cjk, emoji }[KIND];
if (!gen || !OUT) {
  console.error('usage: node gen_scripts.cjs prose|code|cjk|emoji TARGET_BYTES OUT');
  process.exit(2);
}
const parts = []; let bytes = 0;
while (bytes < TARGET) { const s = gen(); parts.push(s); bytes += Buffer.byteLength(s); }
fs.writeFileSync(OUT, parts.join(''));

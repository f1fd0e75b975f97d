// A webpack loader for the replay tests: today's workflow source with deliberate edits
// ({ from, to } string replacements in one file), bundled as a worker would bundle it. An
// edit whose `from` is not in the file fails the bundle, so a renamed line cannot turn a
// test of the replay gate into a test of nothing.
module.exports = function replaceSource(source) {
  const { edits } = this.getOptions();
  let out = source;
  for (const { from, to } of edits) {
    if (!out.includes(from)) throw new Error(`${this.resourcePath}: the text to replace is not there: ${from}`);
    out = out.split(from).join(to);
  }
  return out;
};

// Package words holds nothing itself: its folders are the words every
// layer of quire shares (an event line, an address, an output shape, the
// refusal, a page's document and its event filters, an AgentRun document,
// a JSON pointer, where two views differ). They sit below everything that
// uses them and import, of quire, only each other and the leaf helpers
// under internal that import nothing of quire (a test holds it).
package words

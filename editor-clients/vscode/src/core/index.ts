/** Client logic shared by the VS Code extension and the Node tests (no `vscode` import). */
export * from './protocol';
export * from './framing';
export * from './requests';
export * from './render';
export * from './settings';

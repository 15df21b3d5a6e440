// askUser inside a child: the question must reach the parent's asker.
import { agenticFunction, askUser } from "@openprogram/session-context";

/** Asks which dataset to use and returns the choice. */
export const pickDataset = agenticFunction(
  { name: "pick_dataset", doc: "Choose the dataset with the user." },
  async ({ purpose }: { purpose: string }) => {
    const dataset = await askUser(`Which dataset for ${purpose}?`, { choices: ["mnist", "cifar10", "imagenet"] });
    return { dataset };
  },
);

/** Asks with a short timeout and a default. */
export const pickDatasetQuickly = agenticFunction({ name: "pick_dataset_quickly", doc: "Choose fast." }, async () => ({
  dataset: await askUser("Which dataset, quickly?", { timeoutMs: 300, default: "mnist" }),
}));
